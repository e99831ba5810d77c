// Slurm node, job and configuration readings; see slurm_info.hpp (the JSON node lists:
// slurm_info_json.cpp).
#include "integrations/slurm/slurm_info.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/hostlist.hpp"

namespace preflight::outcome {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.remove_suffix(1);
    }
    return s;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

// Lines of text, each without its '\n'.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        f(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
}

}  // namespace

int gres_gpu_count(std::string_view gres) {
    long total = 0;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= gres.size(); ++i) {
        const char c = i < gres.size() ? gres[i] : ',';
        depth += c == '(' ? 1 : (c == ')' ? -1 : 0);
        if (c != ',' || depth > 0) {
            continue;
        }
        std::string_view item = trim(gres.substr(start, i - start));
        start = i + 1;
        item = item.substr(0, item.find('('));  // "(S:0-1)", "(IDX:0-3)"
        for (std::string_view tres : {"gres/", "gres:"}) {
            if (item.substr(0, tres.size()) == tres) {
                item.remove_prefix(tres.size());  // TresPerNode: "gres/gpu:2", "gres:gpu:2"
            }
        }
        const std::size_t colon = item.find(':');
        if (item.substr(0, colon) != "gpu") {
            continue;
        }
        if (colon == std::string_view::npos) {
            total += 1;  // "gpu": one
            continue;
        }
        const std::string_view last = item.substr(item.rfind(':') + 1);
        const bool digits = !last.empty() && std::all_of(last.begin(), last.end(), [](char d) {
            return d >= '0' && d <= '9';
        });
        if (digits) {
            total +=
                last.size() <= 6 ? std::stol(std::string(last)) : 0;  // not a count Slurm prints
        } else if (item.rfind(':') == colon) {
            total += 1;  // "gpu:h100" names a type without a count: one
        }
    }
    return static_cast<int>(std::min<long>(total, std::numeric_limits<int>::max()));
}

std::map<std::string, int> parse_job_node_gpus(std::string_view text) {
    std::map<std::string, int> out;
    for_each_line(text, [&](std::string_view line) {
        line = trim(line);
        if (line.rfind("Nodes=", 0) != 0) {
            return;
        }
        const std::string_view list = line.substr(6, line.find(' ') - 6);
        const std::size_t at = line.find(" GRES=");
        std::string_view gres;
        if (at != std::string_view::npos) {
            gres = line.substr(at + 6);
            gres = gres.substr(0, gres.find(' '));
        }
        auto names = core::expand_hostlist(list);
        if (!names) {
            return;
        }
        for (const auto& name : names.value()) {
            out[name] = gres_gpu_count(gres);
        }
    });
    return out;
}

std::map<std::string, std::string> parse_scontrol_config(std::string_view text) {
    std::map<std::string, std::string> out;
    for_each_line(text, [&](std::string_view line) {
        const std::size_t eq = line.find(" = ");
        if (eq == std::string_view::npos) {
            return;
        }
        const std::string_view key = trim(line.substr(0, eq));
        if (key.empty() || key.find(' ') != std::string_view::npos) {
            return;
        }
        out.emplace(std::string(key), std::string(trim(line.substr(eq + 3))));
    });
    return out;
}

std::vector<std::string> slurm_config_list(const std::map<std::string, std::string>& config,
                                           const std::string& key) {
    std::vector<std::string> out;
    if (auto it = config.find(key); it != config.end()) {
        if (it->second != "(null)" && !it->second.empty()) {
            out.push_back(it->second);  // 22.05: one program
        }
        return out;
    }
    for (std::size_t i = 0; i < config.size(); ++i) {  // 24.11 and later: Key[0], Key[1], ...
        auto it = config.find(key + "[" + std::to_string(i) + "]");
        if (it == config.end()) {
            break;
        }
        if (it->second != "(null)" && !it->second.empty()) {
            out.push_back(it->second);
        }
    }
    return out;
}

core::Result<double> slurm_seconds(std::string_view value) {
    value = trim(value);
    const std::string word = upper(std::string(value));
    if (word == "UNLIMITED" || word == "INFINITE") {
        return std::numeric_limits<double>::infinity();
    }
    std::size_t digits = 0;
    while (digits < value.size() && digits < 9 && value[digits] >= '0' && value[digits] <= '9') {
        ++digits;
    }
    const std::string_view unit = trim(value.substr(digits));
    if (digits == 0 || (digits < value.size() && value[digits] >= '0' && value[digits] <= '9')) {
        return core::Error{"not a time in seconds: '" + std::string(value.substr(0, 40)) + "'"};
    }
    const double number = std::stod(std::string(value.substr(0, digits)));
    if (unit.empty() || unit == "sec") {
        // 22.05 prints an unset 16-bit timeout as its raw NO_VAL16 (65534); INFINITE16 is 65535.
        return number >= 65534 ? std::numeric_limits<double>::infinity() : number;
    }
    if (unit == "min") {
        return number * 60;
    }
    return core::Error{"not a time in seconds: '" + std::string(value.substr(0, 40)) + "'"};
}

std::vector<std::string> prolog_budget_warnings(double budget_s,
                                                const std::map<std::string, std::string>& config) {
    std::vector<std::string> out;
    const double need = budget_s + k_prolog_overhead_s;
    auto check = [&](const char* key, const std::string& consequence, const std::string& fix) {
        auto it = config.find(key);
        if (it == config.end()) {
            out.push_back(fmt::format("scontrol show config has no {}: cannot judge it", key));
            return;
        }
        auto seconds = slurm_seconds(it->second);
        if (!seconds) {
            out.push_back(fmt::format("{}: {}", key, seconds.error().message));
            return;
        }
        if (std::isfinite(*seconds) && *seconds < need) {
            out.push_back(fmt::format(
                "{} is {:g} s, but the prolog may take {:g} s (budget {:g} s + {:g} s for "
                "prolog.sh's own timeout and kill): {}; {}",
                key, *seconds, need, budget_s, k_prolog_overhead_s, consequence, fix));
        }
    };
    check("PrologEpilogTimeout",
          "Slurm would kill a prolog that uses its whole budget and drain the node",
          fmt::format("raise PrologEpilogTimeout to at least {:g} or lower PREFLIGHT_BUDGET_S",
                      std::ceil(need)));
    check("BatchStartTimeout",
          "a batch job whose prolog runs that long may be taken for a failed launch "
          "(slurm.conf(5): larger values may be required if more time is required to execute "
          "the Prolog)",
          fmt::format("raise BatchStartTimeout to at least {:g}", std::ceil(need)));
    return out;
}

core::Result<std::map<std::string, SlurmNodeInfo>> read_node_states(
    const SlurmClient& client, const std::vector<std::string>& names, bool* used_json) {
    if (used_json != nullptr) {
        *used_json = false;
    }
    std::map<std::string, SlurmNodeInfo> out;
    if (names.empty()) {
        return out;
    }
    core::ProcessOptions options;
    options.timeout = client.timeout;
    auto result = client.runner.run(
        {client.scontrol, "--json", "show", "node", core::compress_hostlist(names)}, options);
    if (result && !result->timed_out) {
        if (auto nodes = parse_slurm_nodes_json(result->output); nodes) {
            const std::set<std::string> wanted(names.begin(), names.end());
            for (auto& n : nodes.value()) {
                if (wanted.count(n.name) != 0) {
                    out[n.name] = std::move(n);
                }
            }
            if (used_json != nullptr) {
                *used_json = true;
            }
            return out;
        }
    }
    // Slurm before 23.02: "scontrol: unrecognized option '--json'"; the text form has it all.
    spdlog::debug("scontrol --json show node gave no JSON node list; reading its -o text");
    return client.nodes(names);
}

core::Result<std::map<std::string, int>> read_job_node_gpus(const SlurmClient& client,
                                                            const std::string& job_id) {
    auto text = client.run({"show", "job", "-d", job_id});
    if (!text) {
        return text.error();
    }
    return parse_job_node_gpus(text.value());
}

core::Result<std::map<std::string, std::string>> read_slurm_config(const SlurmClient& client) {
    auto text = client.run({"show", "config"});
    if (!text) {
        return text.error();
    }
    auto config = parse_scontrol_config(text.value());
    if (config.empty()) {
        return core::Error{"scontrol show config: no \"Key = value\" lines in its output"};
    }
    return config;
}

}  // namespace preflight::outcome
