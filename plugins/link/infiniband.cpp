#include "plugins/link/infiniband.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "core/sysfs.hpp"
#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {

namespace {

const std::string k_class_ib = "/sys/class/infiniband";

// The counters that mean a sick link rather than a busy one (the ones ibdiagnet and the
// InfiniBand Architecture Specification's PortCounters attribute flag as errors).
const std::vector<std::string> k_default_error_counters = {
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_xmit_discards",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
};

struct Port {
    std::string device;
    std::string port;
    std::string dir;
    std::string label;  // "mlx5_3 port 1"
};

link::CounterSnapshot read_counters(const core::SysfsReader& sysfs, const Port& port,
                                    const std::vector<std::string>& names) {
    link::CounterSnapshot snapshot;
    for (const auto& name : names) {
        if (!link::valid_name(name)) {
            continue;
        }
        if (auto value = sysfs.read_int(port.dir + "/counters/" + name); value && *value >= 0) {
            snapshot[name] = static_cast<unsigned long long>(*value);
        }
    }
    return snapshot;
}

}  // namespace

core::CheckSpec InfinibandCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "state, rate, link layer and error counters of RDMA ports (sysfs)",
        .params =
            {
                {"devices", ParamType::string_list, nlohmann::json::array(),
                 "RDMA devices to check (mlx5_0, ...); empty = every device under "
                 "/sys/class/infiniband"},
                {"expect_active_ports", ParamType::integer, 0,
                 "minimum number of ACTIVE ports over the checked devices; 0 = not checked"},
                {"expect_rate_gbps", ParamType::integer, 0,
                 "minimum rate of every active port in Gb/s (sysfs 'rate'); 0 = not checked",
                 "Gb/s"},
                {"expect_link_layer", ParamType::string, "",
                 "link layer every port must have: InfiniBand or Ethernet; empty = not checked"},
                {"require_all_active", ParamType::boolean, true,
                 "a port that is not ACTIVE/LinkUp is a finding (false: only counted)"},
                {"error_counters", ParamType::string_list, k_default_error_counters,
                 "port counters (under ports/<p>/counters) reported and, with sample_ms, judged by "
                 "delta"},
                {"sample_ms", ParamType::integer, 0,
                 "window over which error counters are sampled twice; 0 = report values, judge "
                 "nothing",
                 "ms"},
                {"max_error_delta", ParamType::integer, 0,
                 "largest growth of any error counter within the window (or since begin) that "
                 "passes"},
                {"phase", ParamType::string, "window",
                 "window: judge counters over sample_ms; begin: also record the counters as a "
                 "baseline "
                 "in this agent; end: judge their growth since the begin baseline (the controller "
                 "brackets the collective checks with begin and end)"},
            },
        // `phase` begin/end: a counter baseline before the collectives, growth after.
        .brackets_collectives = true,
        .settings = {"*.rate_gbps"},
    };
}

core::CheckResult InfinibandCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    const auto expect_active = params.at("expect_active_ports").get<long long>();
    const auto expect_rate = params.at("expect_rate_gbps").get<long long>();
    const auto expect_layer = params.at("expect_link_layer").get<std::string>();
    const auto require_all_active = params.at("require_all_active").get<bool>();
    const auto counter_names = params.at("error_counters").get<std::vector<std::string>>();
    const auto sample_ms = std::max(0LL, params.at("sample_ms").get<long long>());
    const auto max_delta = static_cast<unsigned long long>(
        std::max(0LL, params.at("max_error_delta").get<long long>()));

    core::CheckResult result;
    const auto phase_text = params.at("phase").get<std::string>();
    const auto phase = link::parse_phase(phase_text);
    if (!phase) {
        result.verdict = core::Verdict::error;
        result.detail = "phase: '" + phase_text + "' is not window, begin or end";
        return result;
    }
    const std::string store_key = link::snapshot_key(std::string(k_name), ctx.node, ctx.sysfs_root);
    std::vector<std::string> findings;
    std::vector<std::string> unjudged;  // could not be compared: error, not fail
    auto devices = params.at("devices").get<std::vector<std::string>>();
    const bool auto_mode = devices.empty();
    if (auto_mode) {
        devices = sysfs.list(k_class_ib);
        if (devices.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no RDMA device under " + sysfs.path(k_class_ib).string();
            return result;
        }
    }
    // Looked up after the skip: a node with nothing to read skips in both phases.
    std::optional<link::Baseline> baseline;
    if (!link::take_baseline(*phase, store_key, baseline, result)) {
        return result;
    }

    std::vector<Port> ports;
    for (const auto& device : devices) {
        if (!link::valid_name(device)) {
            findings.push_back("'" + device + "': not a valid device name");
            continue;
        }
        const std::string ports_dir = k_class_ib + "/" + device + "/ports";
        const auto names = sysfs.list(ports_dir);
        if (names.empty()) {
            findings.push_back(device + ": missing (no " + ports_dir + ")");
            continue;
        }
        for (const auto& port : names) {
            ports.push_back({device, port, ports_dir + "/" + port, device + " port " + port});
        }
    }

    int active_ports = 0;
    std::vector<std::string> summaries;
    std::vector<link::CounterSnapshot> before;
    for (const auto& port : ports) {
        const std::string key = port.device + "." + port.port + ".";
        const auto state = sysfs.read(port.dir + "/state");
        const auto phys = sysfs.read(port.dir + "/phys_state");
        const auto rate_text = sysfs.read(port.dir + "/rate");
        const auto layer = sysfs.read(port.dir + "/link_layer");
        const std::string state_s = state ? link::state_name(*state) : "unreadable";
        const std::string phys_s = phys ? link::state_name(*phys) : "unreadable";
        // ACTIVE alone is not enough: a port can be logically ACTIVE while the physical layer
        // retrains; LinkUp alone is a port waiting for the subnet manager (INIT/ARMED).
        const bool active = state_s == "ACTIVE" && phys_s == "LinkUp";
        result.metrics[key + "active"] = active ? 1.0 : 0.0;
        if (active) {
            ++active_ports;
        } else if (require_all_active) {
            findings.push_back(port.label + ": state " + state_s + ", phys_state " + phys_s);
        }

        const auto rate = link::leading_number_of(rate_text);
        if (rate) {
            result.metrics[key + "rate_gbps"] = *rate;
        }
        // A down port reports a nominal rate (often the slowest width/speed); judging it would
        // repeat the state finding with a misleading figure.
        if (expect_rate > 0 && active) {
            if (!rate) {
                findings.push_back(port.label + ": rate unreadable, expected " +
                                   std::to_string(expect_rate) + " Gb/s");
            } else if (*rate < static_cast<double>(expect_rate)) {
                findings.push_back(port.label + " at " + link::format_number(*rate) +
                                   " Gb/s, expected " + std::to_string(expect_rate));
            }
        }
        if (!expect_layer.empty() && layer.value_or("") != expect_layer) {
            findings.push_back(port.label + ": link_layer " + layer.value_or("unreadable") +
                               ", expected " + expect_layer);
        }

        auto counters = read_counters(sysfs, port, counter_names);
        for (const auto& [name, value] : counters) {
            result.metrics[key + name] = static_cast<double>(value);
        }
        before.push_back(std::move(counters));
        summaries.push_back(port.label + ": " + state_s + ", " +
                            (rate ? link::format_number(*rate) + " Gb/s" : "rate unknown") + ", " +
                            layer.value_or("link layer unknown"));
    }
    result.metrics["active_ports"] = active_ports;
    result.metrics["ports"] = static_cast<double>(ports.size());

    if (expect_active > 0 && active_ports < expect_active) {
        findings.push_back("active ports " + std::to_string(active_ports) + ", expected " +
                           std::to_string(expect_active));
    }

    if (*phase == link::CounterPhase::begin) {
        link::Baseline taken{{}, std::chrono::steady_clock::now()};
        for (std::size_t i = 0; i < ports.size(); ++i) {
            taken.counters[ports[i].label] = before[i];
        }
        link::CounterSnapshots::instance().put(store_key, std::move(taken));
    } else if (*phase == link::CounterPhase::end) {
        // Growth over the run: the baseline from begin against the reading just taken.
        for (std::size_t i = 0; i < ports.size(); ++i) {
            const auto it = baseline->counters.find(ports[i].label);
            if (it == baseline->counters.end()) {
                unjudged.push_back(ports[i].label + ": not in the baseline snapshot");
                continue;
            }
            for (const auto& [name, value] : before[i]) {
                const auto was = it->second.find(name);
                if (was != it->second.end() && value >= was->second) {
                    result.metrics[ports[i].device + "." + ports[i].port + "." + name + "_delta"] =
                        static_cast<double>(value - was->second);
                }
            }
            auto grew =
                link::counter_delta_findings(ports[i].label, it->second, before[i], max_delta);
            findings.insert(findings.end(), grew.begin(), grew.end());
        }
        result.metrics["baseline_age_s"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - baseline->taken)
                .count();
    } else if (sample_ms > 0 && !ports.empty()) {
        // Counters since boot say little (a link that flapped during cabling months ago); growth
        // within a window says the link is sick now.
        const auto window = std::chrono::milliseconds(sample_ms);
        if (std::chrono::steady_clock::now() + window >= ctx.deadline) {
            unjudged.push_back("sample_ms " + std::to_string(sample_ms) +
                               " does not fit before the deadline");
        } else {
            ctx.wait(window);
            for (std::size_t i = 0; i < ports.size(); ++i) {
                const auto after = read_counters(sysfs, ports[i], counter_names);
                for (const auto& [name, value] : after) {
                    const auto it = before[i].find(name);
                    if (it != before[i].end() && value >= it->second) {
                        result.metrics[ports[i].device + "." + ports[i].port + "." + name +
                                       "_delta"] = static_cast<double>(value - it->second);
                    }
                }
                auto grew =
                    link::counter_delta_findings(ports[i].label, before[i], after, max_delta);
                findings.insert(findings.end(), grew.begin(), grew.end());
            }
        }
    }

    if (!findings.empty()) {
        result.verdict = core::Verdict::fail;
        findings.insert(findings.end(), unjudged.begin(), unjudged.end());
        result.detail = link::join(findings);
    } else if (!unjudged.empty()) {
        // Counters that could not be compared say nothing about the link: not a fail.
        result.verdict = core::Verdict::error;
        result.detail = link::join(unjudged);
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = std::to_string(active_ports) + " active port(s): " + link::join(summaries);
    }
    return result;
}

}  // namespace preflight::plugins
