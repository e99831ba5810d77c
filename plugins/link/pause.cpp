#include "plugins/link/pause.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <thread>

#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/link_common.hpp"

#include "core/unique_fd.hpp"

namespace preflight::plugins {

namespace ethtool {

namespace {

// Closes the ioctl socket on every path out.
// SIOCETHTOOL with ifr_data pointing at an ethtool command block; returns errno or 0.
int ethtool_ioctl(int fd, const std::string& ifname, void* command) {
    ifreq request{};
    std::strncpy(request.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    request.ifr_data = static_cast<char*>(command);
    return ::ioctl(fd, SIOCETHTOOL, &request) == 0 ? 0 : errno;
}

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

}  // namespace

core::Result<std::map<std::string, unsigned long long>> read_stats(const std::string& ifname) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        return core::Error{"'" + ifname + "': not a valid interface name"};
    }
    const core::UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (sock.get() < 0) {
        return core::Error{std::string("socket(AF_INET): ") + std::strerror(errno)};
    }

    // ETHTOOL_GSSET_INFO takes a bitmask of string sets and returns one u32 per set bit in the
    // flexible array after the header; the buffer must hold that one element.
    std::vector<std::byte> sset_buf(sizeof(ethtool_sset_info) + sizeof(__u32));
    auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf.data());
    sset->cmd = ETHTOOL_GSSET_INFO;
    sset->sset_mask = 1ULL << ETH_SS_STATS;
    if (int err = ethtool_ioctl(sock.get(), ifname, sset); err != 0) {
        if (err == EOPNOTSUPP) {
            return std::map<std::string, unsigned long long>{};
        }
        return core::Error{ifname + ": ETHTOOL_GSSET_INFO: " + std::strerror(err)};
    }
    const __u32 count = (sset->sset_mask & (1ULL << ETH_SS_STATS)) != 0 ? sset->data[0] : 0;
    if (count == 0) {
        return std::map<std::string, unsigned long long>{};
    }

    // Both replies end in flexible arrays sized by count, so they live in raw buffers.
    std::vector<std::byte> strings_buf(sizeof(ethtool_gstrings) +
                                       std::size_t{count} * ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = count;
    if (int err = ethtool_ioctl(sock.get(), ifname, strings); err != 0) {
        return core::Error{ifname + ": ETHTOOL_GSTRINGS: " + std::strerror(err)};
    }

    std::vector<std::byte> stats_buf(sizeof(ethtool_stats) + std::size_t{count} * sizeof(__u64));
    auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf.data());
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = count;
    if (int err = ethtool_ioctl(sock.get(), ifname, stats); err != 0) {
        return core::Error{ifname + ": ETHTOOL_GSTATS: " + std::strerror(err)};
    }

    // The kernel may report fewer entries than GSSET_INFO promised if the set changed between
    // the calls (queues reconfigured); never read past what both replies hold.
    const __u32 n = std::min({count, strings->len, stats->n_stats});
    std::map<std::string, unsigned long long> out;
    for (__u32 i = 0; i < n; ++i) {
        const char* raw =
            reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
        std::string name(raw, strnlen(raw, ETH_GSTRING_LEN));
        out[name] = stats->data[i];
    }
    return out;
}

bool matches_any(const std::string& name, const std::vector<std::string>& patterns) {
    const std::string lowered = lower(name);
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
        return !pattern.empty() && lowered.find(lower(pattern)) != std::string::npos;
    });
}

std::vector<std::string> pause_findings(const std::string& ifname,
                                        const std::map<std::string, unsigned long long>& before,
                                        const std::map<std::string, unsigned long long>& after,
                                        const std::vector<std::string>& patterns,
                                        unsigned long long max_delta) {
    link::CounterSnapshot selected;
    for (const auto& [name, value] : after) {
        if (matches_any(name, patterns)) {
            selected[name] = value;
        }
    }
    return link::counter_delta_findings(ifname, before, selected, max_delta);
}

}  // namespace ethtool

core::CheckSpec PauseCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "growth of pause, PFC, discard and drop counters of interfaces (ETHTOOL_GSTATS)",
        .params =
            {
                {"interfaces", ParamType::string_list, nlohmann::json::array(),
                 "interfaces to sample; empty = every interface in this network namespace except "
                 "lo"},
                {"sample_ms", ParamType::integer, 200,
                 "window between the two readings, in ms (phase window only)", "ms"},
                {"patterns", ParamType::string_list,
                 nlohmann::json::array({"pause", "pfc", "prio", "discard", "drop"}),
                 "substrings (case-insensitive) selecting the counters judged"},
                {"max_delta", ParamType::integer, 0,
                 "largest growth of any selected counter over the window (or since begin) that "
                 "passes"},
                {"phase", ParamType::string, "window",
                 "window: two readings sample_ms apart; begin: record a baseline in this agent and "
                 "pass; "
                 "end: judge the growth since the begin baseline (the controller brackets the "
                 "collective checks with begin and end)"},
            },
        // `phase` begin/end: a counter baseline before the collectives, growth after.
        .brackets_collectives = true,
    };
}

core::CheckResult PauseCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const auto sample_ms = std::max(0LL, params.at("sample_ms").get<long long>());
    const auto patterns = params.at("patterns").get<std::vector<std::string>>();
    const auto max_delta =
        static_cast<unsigned long long>(std::max(0LL, params.at("max_delta").get<long long>()));
    core::CheckResult result;
    const auto phase_text = params.at("phase").get<std::string>();
    const auto phase = link::parse_phase(phase_text);
    if (!phase) {
        result.verdict = core::Verdict::error;
        result.detail = "phase: '" + phase_text + "' is not window, begin or end";
        return result;
    }
    const std::string key = link::snapshot_key(std::string(k_name), ctx.node, "netns");

    auto names = params.at("interfaces").get<std::vector<std::string>>();
    const bool auto_mode = names.empty();
    if (auto_mode) {
        // if_nameindex goes through netlink, so it lists this namespace's interfaces even where
        // /sys was mounted in another namespace.
        std::unique_ptr<struct if_nameindex, decltype(&if_freenameindex)> list(if_nameindex(),
                                                                               &if_freenameindex);
        for (auto* entry = list.get(); entry != nullptr && entry->if_index != 0; ++entry) {
            if (std::string(entry->if_name) != "lo") {
                names.emplace_back(entry->if_name);
            }
        }
        std::sort(names.begin(), names.end());
    }

    std::vector<std::string> findings;
    std::vector<std::string> sampled;
    std::map<std::string, std::map<std::string, unsigned long long>> before;
    for (const auto& ifname : names) {
        auto stats = ethtool::read_stats(ifname);
        if (!stats) {
            findings.push_back(stats.error().message);
            continue;
        }
        if (stats->empty()) {
            if (!auto_mode) {
                findings.push_back(ifname + ": no ethtool statistics");
            }
            continue;
        }
        before[ifname] = std::move(*stats);
        sampled.push_back(ifname);
    }
    if (sampled.empty() && findings.empty()) {
        result.verdict = core::Verdict::skip;
        result.detail = "no interface with ethtool statistics";
        return result;
    }
    // Looked up after the skip: a node with nothing to read skips in both phases.
    std::optional<link::Baseline> baseline;
    if (!link::take_baseline(*phase, key, baseline, result)) {
        return result;
    }

    // The selected counters of one reading, as judged and as stored for a later end phase.
    auto selected = [&](const std::map<std::string, unsigned long long>& stats) {
        link::CounterSnapshot out;
        for (const auto& [name, value] : stats) {
            if (ethtool::matches_any(name, patterns)) {
                out[name] = value;
            }
        }
        return out;
    };

    if (*phase == link::CounterPhase::begin) {
        link::Baseline taken{{}, std::chrono::steady_clock::now()};
        int counters = 0;
        for (const auto& ifname : sampled) {
            auto snapshot = selected(before[ifname]);
            counters += static_cast<int>(snapshot.size());
            taken.counters[ifname] = std::move(snapshot);
        }
        link::CounterSnapshots::instance().put(key, std::move(taken));
        result.metrics["interfaces"] = static_cast<double>(sampled.size());
        result.metrics["counters"] = counters;
        if (findings.empty()) {
            result.verdict = core::Verdict::pass;
            result.detail = "baseline of " + std::to_string(counters) +
                            " pause/drop counter(s) on " + link::join(sampled) + " recorded";
        } else {
            result.verdict = core::Verdict::fail;
            result.detail = link::join(findings);
        }
        return result;
    }

    // Readings to judge: (first, second) per interface. In phase end the first is the stored
    // baseline and the reading just taken is the second; interfaces only in one of them are
    // named, not judged.
    std::vector<std::string> judged;
    std::map<std::string, std::map<std::string, unsigned long long>> after;
    if (*phase == link::CounterPhase::end) {
        for (const auto& [ifname, snapshot] : baseline->counters) {
            auto now = before.find(ifname);
            if (now == before.end()) {
                // A named interface that could not be read has its finding already.
                if (std::find(names.begin(), names.end(), ifname) == names.end()) {
                    findings.push_back(ifname + ": gone since the baseline snapshot");
                }
                continue;
            }
            after[ifname] = std::move(now->second);
            judged.push_back(ifname);
        }
        for (const auto& ifname : sampled) {
            if (baseline->counters.count(ifname) == 0) {
                findings.push_back(ifname + ": not in the baseline snapshot");
            }
        }
        before.clear();
        for (const auto& ifname : judged) {
            before[ifname] = baseline->counters.at(ifname);
        }
    } else {
        if (!sampled.empty()) {
            const auto window = std::chrono::milliseconds(sample_ms);
            if (std::chrono::steady_clock::now() + window >= ctx.deadline) {
                result.verdict = core::Verdict::error;
                result.detail =
                    "sample_ms " + std::to_string(sample_ms) + " does not fit before the deadline";
                return result;
            }
            std::this_thread::sleep_for(window);
        }
        for (const auto& ifname : sampled) {
            auto stats = ethtool::read_stats(ifname);
            if (!stats) {
                findings.push_back(stats.error().message);
                continue;
            }
            after[ifname] = std::move(*stats);
            judged.push_back(ifname);
        }
    }

    int counters = 0;
    for (const auto& ifname : judged) {
        const auto& first = before[ifname];
        const auto& second = after[ifname];
        for (const auto& [name, value] : second) {
            if (!ethtool::matches_any(name, patterns)) {
                continue;
            }
            ++counters;
            const auto it = first.find(name);
            if (it != first.end() && value >= it->second) {
                result.metrics[ifname + "." + name + "_delta"] =
                    static_cast<double>(value - it->second);
            }
        }
        auto grew = ethtool::pause_findings(ifname, first, second, patterns, max_delta);
        findings.insert(findings.end(), grew.begin(), grew.end());
    }
    result.metrics["interfaces"] = static_cast<double>(judged.size());
    result.metrics["counters"] = counters;
    std::string span = "over " + std::to_string(sample_ms) + " ms";
    if (baseline) {
        const double age =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - baseline->taken)
                .count();
        result.metrics["baseline_age_s"] = age;
        span =
            "since the begin snapshot (" + link::format_number(std::round(age * 10) / 10) + " s)";
    }

    if (findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = std::to_string(counters) + " pause/drop counter(s) on " +
                        link::join(judged) + " steady " + span;
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(findings);
    }
    return result;
}

}  // namespace preflight::plugins
