#include "plugins/link/infiniband.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// The check's params, read once.
struct IbParams {
    long long expect_active = 0;
    long long expect_rate = 0;
    std::string expect_layer;
    bool require_all_active = true;
    std::vector<std::string> counter_names;
    long long sample_ms = 0;
    unsigned long long max_delta = 0;
};

IbParams params_from(const nlohmann::json& params) {
    IbParams p;
    p.expect_active = params.at("expect_active_ports").get<long long>();
    p.expect_rate = params.at("expect_rate_gbps").get<long long>();
    p.expect_layer = params.at("expect_link_layer").get<std::string>();
    p.require_all_active = params.at("require_all_active").get<bool>();
    p.counter_names = params.at("error_counters").get<std::vector<std::string>>();
    p.sample_ms = std::max(0LL, params.at("sample_ms").get<long long>());
    p.max_delta = static_cast<unsigned long long>(
        std::max(0LL, params.at("max_error_delta").get<long long>()));
    return p;
}

// What a run has read and found so far.
struct IbRun {
    std::vector<Port> ports;
    std::vector<link::CounterSnapshot> before;  // per port, the counters as first read
    std::vector<std::string> summaries;         // per port, for the pass detail
    std::vector<std::string> findings;
    std::vector<std::string> unjudged;  // could not be compared: error, not fail
    int active_ports = 0;
};

// The metric prefix of a port: "mlx5_0.1.".
std::string metric_prefix(const Port& port) {
    return port.device + "." + port.port + ".";
}

// Every port of the devices; a device with an invalid name or no ports is a finding.
void list_ports(const core::SysfsReader& sysfs, const std::vector<std::string>& devices,
                IbRun& run) {
    for (const auto& device : devices) {
        if (!link::valid_name(device)) {
            run.findings.push_back("'" + device + "': not a valid device name");
            continue;
        }
        const std::string ports_dir = k_class_ib + "/" + device + "/ports";
        const auto names = sysfs.list(ports_dir);
        if (names.empty()) {
            run.findings.push_back(device + ": missing (no " + ports_dir + ")");
            continue;
        }
        for (const auto& port : names) {
            run.ports.push_back({device, port, ports_dir + "/" + port, device + " port " + port});
        }
    }
}

// One port's state, rate and link layer judged against the params, and its counters read.
void read_port(const core::SysfsReader& sysfs, const Port& port, const IbParams& p, IbRun& run,
               std::map<std::string, double>& metrics) {
    const std::string key = metric_prefix(port);
    const auto state = sysfs.read(port.dir + "/state");
    const auto phys = sysfs.read(port.dir + "/phys_state");
    const auto rate_text = sysfs.read(port.dir + "/rate");
    const auto layer = sysfs.read(port.dir + "/link_layer");
    const std::string state_s = state ? link::state_name(*state) : "unreadable";
    const std::string phys_s = phys ? link::state_name(*phys) : "unreadable";
    // ACTIVE alone is not enough: a port can be logically ACTIVE while the physical layer
    // retrains; LinkUp alone is a port waiting for the subnet manager (INIT/ARMED).
    const bool active = state_s == "ACTIVE" && phys_s == "LinkUp";
    metrics[key + "active"] = active ? 1.0 : 0.0;
    if (active) {
        ++run.active_ports;
    } else if (p.require_all_active) {
        run.findings.push_back(port.label + ": state " + state_s + ", phys_state " + phys_s);
    }

    const auto rate = link::leading_number_of(rate_text);
    if (rate) {
        metrics[key + "rate_gbps"] = *rate;
    }
    // A down port reports a nominal rate (often the slowest width/speed); judging it would
    // repeat the state finding with a misleading figure.
    if (p.expect_rate > 0 && active) {
        if (!rate) {
            run.findings.push_back(port.label + ": rate unreadable, expected " +
                                   std::to_string(p.expect_rate) + " Gb/s");
        } else if (*rate < static_cast<double>(p.expect_rate)) {
            run.findings.push_back(port.label + " at " + link::format_number(*rate) +
                                   " Gb/s, expected " + std::to_string(p.expect_rate));
        }
    }
    if (!p.expect_layer.empty() && layer.value_or("") != p.expect_layer) {
        run.findings.push_back(port.label + ": link_layer " + layer.value_or("unreadable") +
                               ", expected " + p.expect_layer);
    }

    auto counters = read_counters(sysfs, port, p.counter_names);
    for (const auto& [name, value] : counters) {
        metrics[key + name] = static_cast<double>(value);
    }
    run.before.push_back(std::move(counters));
    run.summaries.push_back(port.label + ": " + state_s + ", " +
                            (rate ? link::format_number(*rate) + " Gb/s" : "rate unknown") + ", " +
                            layer.value_or("link layer unknown"));
}

// "<device>.<port>.<counter>_delta" for every counter of later that did not go backwards.
void put_deltas(const Port& port, const link::CounterSnapshot& earlier,
                const link::CounterSnapshot& later, std::map<std::string, double>& metrics) {
    for (const auto& [name, value] : later) {
        const auto was = earlier.find(name);
        if (was != earlier.end() && value >= was->second) {
            metrics[metric_prefix(port) + name + "_delta"] =
                static_cast<double>(value - was->second);
        }
    }
}

// Phase begin: the counters just read become the baseline under store_key.
void record_baseline(const IbRun& run, const std::string& store_key) {
    link::Baseline taken{{}, std::chrono::steady_clock::now()};
    for (std::size_t i = 0; i < run.ports.size(); ++i) {
        taken.counters[run.ports[i].label] = run.before[i];
    }
    link::CounterSnapshots::instance().put(store_key, std::move(taken));
}

// Phase end: growth over the run, the baseline from begin against the reading just taken.
void judge_since_baseline(const link::Baseline& baseline, unsigned long long max_delta, IbRun& run,
                          std::map<std::string, double>& metrics) {
    for (std::size_t i = 0; i < run.ports.size(); ++i) {
        const auto it = baseline.counters.find(run.ports[i].label);
        if (it == baseline.counters.end()) {
            run.unjudged.push_back(run.ports[i].label + ": not in the baseline snapshot");
            continue;
        }
        put_deltas(run.ports[i], it->second, run.before[i], metrics);
        auto grew =
            link::counter_delta_findings(run.ports[i].label, it->second, run.before[i], max_delta);
        run.findings.insert(run.findings.end(), grew.begin(), grew.end());
    }
    metrics["baseline_age_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - baseline.taken).count();
}

// Phase window: counters since boot say little (a link that flapped during cabling months ago);
// growth within a window says the link is sick now.
void judge_window(const CheckContext& ctx, const core::SysfsReader& sysfs, const IbParams& p,
                  IbRun& run, std::map<std::string, double>& metrics) {
    const auto window = std::chrono::milliseconds(p.sample_ms);
    if (std::chrono::steady_clock::now() + window >= ctx.deadline) {
        run.unjudged.push_back("sample_ms " + std::to_string(p.sample_ms) +
                               " does not fit before the deadline");
        return;
    }
    ctx.wait(window);
    for (std::size_t i = 0; i < run.ports.size(); ++i) {
        const auto after = read_counters(sysfs, run.ports[i], p.counter_names);
        put_deltas(run.ports[i], run.before[i], after, metrics);
        auto grew =
            link::counter_delta_findings(run.ports[i].label, run.before[i], after, p.max_delta);
        run.findings.insert(run.findings.end(), grew.begin(), grew.end());
    }
}

// Findings fail; counters that could not be compared say nothing about the link: an error, not
// a fail; else pass with each port's summary.
void conclude(IbRun& run, core::CheckResult& result) {
    if (!run.findings.empty()) {
        result.verdict = core::Verdict::fail;
        run.findings.insert(run.findings.end(), run.unjudged.begin(), run.unjudged.end());
        result.detail = link::join(run.findings);
    } else if (!run.unjudged.empty()) {
        result.verdict = core::Verdict::error;
        result.detail = link::join(run.unjudged);
    } else {
        result.verdict = core::Verdict::pass;
        result.detail =
            std::to_string(run.active_ports) + " active port(s): " + link::join(run.summaries);
    }
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
    const IbParams p = params_from(params);

    core::CheckResult result;
    const auto phase_text = params.at("phase").get<std::string>();
    const auto phase = link::parse_phase(phase_text);
    if (!phase) {
        result.verdict = core::Verdict::error;
        result.detail = "phase: '" + phase_text + "' is not window, begin or end";
        return result;
    }
    const std::string store_key = link::snapshot_key(std::string(k_name), ctx.node, ctx.sysfs_root);
    auto devices = params.at("devices").get<std::vector<std::string>>();
    if (devices.empty()) {
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

    IbRun run;
    list_ports(sysfs, devices, run);
    for (const auto& port : run.ports) {
        read_port(sysfs, port, p, run, result.metrics);
    }
    result.metrics["active_ports"] = run.active_ports;
    result.metrics["ports"] = static_cast<double>(run.ports.size());
    if (p.expect_active > 0 && run.active_ports < p.expect_active) {
        run.findings.push_back("active ports " + std::to_string(run.active_ports) + ", expected " +
                               std::to_string(p.expect_active));
    }

    if (*phase == link::CounterPhase::begin) {
        record_baseline(run, store_key);
    } else if (*phase == link::CounterPhase::end) {
        judge_since_baseline(*baseline, p.max_delta, run, result.metrics);
    } else if (p.sample_ms > 0 && !run.ports.empty()) {
        judge_window(ctx, sysfs, p, run, result.metrics);
    }
    conclude(run, result);
    return result;
}

}  // namespace preflight::plugins
