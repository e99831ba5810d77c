#include "outcome/job_impact.hpp"
#include "core/check_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "outcome/report/terminal.hpp"

namespace preflight::outcome {

namespace {

constexpr double k_bytes_per_gb = 1e9;  // nccl-tests reports decimal GB/s
constexpr double k_hours_per_day = 24.0;

std::string percent(double fraction) {
    return format_significant(fraction * 100.0, 3) + " %";
}

}  // namespace

std::optional<double> dtype_bytes(std::string_view dtype) {
    // Element sizes of the IEEE / OCP formats the gradients are reduced in.
    if (dtype == "fp32" || dtype == "float32") {
        return 4.0;
    }
    if (dtype == "bf16" || dtype == "fp16" || dtype == "float16" || dtype == "bfloat16") {
        return 2.0;
    }
    if (dtype == "fp8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2") {
        return 1.0;
    }
    return std::nullopt;
}

double ring_factor(long ranks) {
    // nccl-tests doc/PERFORMANCE.md, all-reduce: busBW = algBW x 2(n-1)/n. In a ring all-reduce
    // every rank sends and receives 2(n-1)/n x the buffer (a reduce-scatter then an all-gather,
    // n-1 steps of size/n each); busBW is defined so that it is comparable to the link speed.
    if (ranks < 2) {
        return 0.0;
    }
    const auto n = static_cast<double>(ranks);
    return 2.0 * (n - 1.0) / n;
}

core::Result<StepEstimate> estimate_step(const JobProfile& job, double busbw_gbps) {
    auto bytes_per_param = dtype_bytes(job.dtype);
    if (!bytes_per_param) {
        return core::Error{"unknown dtype '" + job.dtype + "' (fp32, bf16, fp16, fp8)"};
    }
    if (!(job.params > 0.0) || !std::isfinite(job.params)) {
        return core::Error{"params must be positive"};
    }
    if (job.nodes < 1 || job.gpus_per_node < 1) {
        return core::Error{"nodes and gpus-per-node must be at least 1"};
    }
    if (!(job.compute_ms >= 0.0) || !std::isfinite(job.compute_ms)) {
        return core::Error{"compute-ms must not be negative"};
    }
    if (!(busbw_gbps > 0.0) || !std::isfinite(busbw_gbps)) {
        return core::Error{"bus bandwidth must be positive"};
    }
    StepEstimate e;
    // Gradient bytes = parameters x bytes per parameter: one full gradient is reduced per step
    // (plain data parallelism; ZeRO/FSDP move the same volume as reduce-scatter + all-gather).
    e.gradient_bytes = job.params * *bytes_per_param;
    e.ranks = static_cast<long>(job.nodes) * job.gpus_per_node;
    e.ring_factor = ring_factor(e.ranks);
    e.busbw_gbps = busbw_gbps;
    // busBW = algBW x 2(n-1)/n and algBW = bytes / time (nccl-tests), hence
    // time = bytes x 2(n-1)/n / busBW. With 2 ranks the factor is 1: 440 MB at 0.11 GB/s is 4.0 s.
    e.allreduce_s = e.gradient_bytes * e.ring_factor / (busbw_gbps * k_bytes_per_gb);
    e.compute_s = job.compute_ms / 1000.0;
    // No overlap of compute and communication: the pessimistic bound, and the right one for the
    // last bucket of every backward pass; overlap can hide at most min(compute, comm).
    e.step_s = e.compute_s + e.allreduce_s;
    e.utilization = e.step_s > 0.0 ? e.compute_s / e.step_s : 0.0;
    e.network_bound = e.allreduce_s > e.compute_s;
    return e;
}

std::vector<StepEstimate> ring_scaling(const JobProfile& job, double busbw_gbps) {
    std::vector<StepEstimate> out;
    const long total = static_cast<long>(job.nodes) * job.gpus_per_node;
    for (long ranks = 2; ranks < total; ranks *= 2) {
        JobProfile j = job;
        j.nodes = static_cast<int>(ranks);
        j.gpus_per_node = 1;
        if (auto e = estimate_step(j, busbw_gbps)) {
            out.push_back(*e);
        }
    }
    if (auto e = estimate_step(job, busbw_gbps)) {
        out.push_back(*e);
    }
    return out;
}

std::vector<std::string> busbw_checks(const RunReport& report) {
    std::set<std::string> names;
    for (const auto& n : report.nodes) {
        for (const auto& c : n.checks) {
            if (c.metrics.count(std::string(core::k_busbw_metric)) != 0) {
                names.insert(c.check);
            }
        }
    }
    return {names.begin(), names.end()};
}

core::Result<FleetImpact> estimate_fleet(const JobProfile& job, const RunReport& report,
                                         const std::string& check) {
    FleetImpact impact;
    if (check.empty()) {
        auto checks = busbw_checks(report);
        if (checks.empty()) {
            return core::Error{"the report has no busbw_gbps measurement"};
        }
        impact.check = checks.front();
    } else {
        impact.check = check;
    }
    double slowest = std::numeric_limits<double>::infinity();
    double slowest_kept = std::numeric_limits<double>::infinity();
    for (const auto& n : report.nodes) {
        for (const auto& c : n.checks) {
            auto it = c.metrics.find(std::string(core::k_busbw_metric));
            if (c.check != impact.check || it == c.metrics.end() || !std::isfinite(it->second)) {
                continue;
            }
            ++impact.measured;
            if (it->second < slowest) {
                slowest = it->second;
                impact.slowest_node = n.name;
            }
            // Flagged = judged bad by the evaluator (fail); warn nodes stay, as a launch would keep
            // them.
            if (n.verdict == core::Verdict::fail || c.verdict == core::Verdict::fail) {
                ++impact.flagged;
            } else if (it->second < slowest_kept) {
                slowest_kept = it->second;
                impact.slowest_kept_node = n.name;
            }
        }
    }
    if (impact.measured == 0) {
        return core::Error{"no node has busbw_gbps for " + impact.check};
    }
    JobProfile j = job;
    if (j.nodes <= 0) {
        j.nodes = static_cast<int>(report.nodes.size());
    }
    auto all = estimate_step(j, slowest);
    if (!all) {
        return all.error();
    }
    impact.with_all = *all;
    if (!impact.slowest_kept_node.empty()) {
        // The job keeps its size (spares replace the flagged nodes); only the pace changes.
        auto kept = estimate_step(j, slowest_kept);
        if (!kept) {
            return kept.error();
        }
        impact.without_flagged = *kept;
        impact.slowdown = impact.with_all.step_s / kept->step_s - 1.0;
        // Every rank waits for the slowest one, so the share of each step spent waiting on the bad
        // node is lost on all GPUs: ranks x 24 h x (1 - step_clean / step_all).
        impact.gpu_hours_lost_per_day = static_cast<double>(impact.with_all.ranks) *
                                        k_hours_per_day *
                                        (1.0 - kept->step_s / impact.with_all.step_s);
    }
    return impact;
}

std::optional<JobProfile> job_profile_from_config(const nlohmann::json& config) {
    if (!config.is_object()) {
        return std::nullopt;
    }
    auto it = config.find("job");
    if (it == config.end() || !it->is_object()) {
        return std::nullopt;
    }
    const auto& j = *it;
    JobProfile p;
    try {
        p.params = j.at("params").get<double>();
        p.compute_ms = j.at("compute_ms").get<double>();
        p.dtype = j.value("dtype", p.dtype);
        p.nodes = j.value("nodes", 0);
        p.gpus_per_node = j.value("gpus_per_node", p.gpus_per_node);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
    return p;
}

std::string format_duration(double seconds) {
    if (seconds < 1.0) {
        return format_significant(seconds * 1000.0, 3) + " ms";
    }
    return format_significant(seconds, 3) + " s";
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000.0 && u < 5) {
        bytes /= 1000.0;
        ++u;
    }
    return format_significant(bytes, 3) + " " + units[u];
}

std::string render_step_estimate(const JobProfile& job, const StepEstimate& e) {
    std::string out;
    out += "gradients:   " + format_significant(job.params, 3) + " params x " +
           format_significant(*dtype_bytes(job.dtype), 1) + " B (" + job.dtype +
           ") = " + format_bytes(e.gradient_bytes) + "\n";
    out += "ranks:       " + std::to_string(e.ranks) + " (" + std::to_string(job.nodes) +
           " nodes x " + std::to_string(job.gpus_per_node) +
           " GPUs), ring factor 2(n-1)/n = " + format_significant(e.ring_factor, 4) + "\n";
    out += "busBW:       " + format_significant(e.busbw_gbps, 4) + " GB/s per rank\n";
    out += "all-reduce:  " + format_duration(e.allreduce_s) +
           "  (= bytes x 2(n-1)/n / busBW, ring, nccl-tests doc/PERFORMANCE.md)\n";
    out += "compute:     " + format_duration(e.compute_s) + "\n";
    out += "step:        " + format_duration(e.step_s) + "  (compute + all-reduce, no overlap)\n";
    out += "utilization: " + percent(e.utilization) + "  (compute / step)\n";
    out += std::string("bound:       ") +
           (e.network_bound ? "network-bound (all-reduce > compute)"
                            : "compute-bound (all-reduce <= compute)") +
           "\n";
    return out;
}

std::string render_fleet_impact(const JobProfile& job, const FleetImpact& f) {
    std::string out;
    out += "check:       " + f.check + ": " + std::to_string(f.measured) + " nodes measured, " +
           std::to_string(f.flagged) + " flagged (fail)\n";
    out += "with all nodes (slowest " + f.slowest_node + ", " +
           format_significant(f.with_all.busbw_gbps, 4) + " GB/s sets the pace):\n";
    out += "  all-reduce " + format_duration(f.with_all.allreduce_s) + ", step " +
           format_duration(f.with_all.step_s) + ", utilization " + percent(f.with_all.utilization) +
           (f.with_all.network_bound ? ", network-bound" : "") + "\n";
    if (f.without_flagged) {
        const auto& k = *f.without_flagged;
        out += "without the flagged nodes (slowest " + f.slowest_kept_node + ", " +
               format_significant(k.busbw_gbps, 4) + " GB/s):\n";
        out += "  all-reduce " + format_duration(k.allreduce_s) + ", step " +
               format_duration(k.step_s) + ", utilization " + percent(k.utilization) +
               (k.network_bound ? ", network-bound" : "") + "\n";
        out += "keeping the flagged nodes: steps " + percent(f.slowdown) + " slower, " +
               format_significant(f.gpu_hours_lost_per_day, 3) + " GPU-hours lost per day (" +
               std::to_string(f.with_all.ranks) + " GPUs)\n";
    } else {
        out += "every measured node is flagged: no clean pool to compare with\n";
    }
    (void)job;
    return out;
}

}  // namespace preflight::outcome
