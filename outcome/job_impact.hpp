// The job-impact model: what a measured bus bandwidth costs a data-parallel training job. Pure
// functions of their inputs; formulas and assumptions are documented in job_impact.cpp and README.
//
// Assumptions: gradients are all-reduced once per step with the ring algorithm over every rank
// (nodes x gpus_per_node), communication does not overlap compute, and the measured busBW
// (nccl-tests definition, decimal GB/s) is the bus bandwidth each rank sustains in that ring.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

struct JobProfile {
    double params = 0.0;         // model parameters, e.g. 7e9
    std::string dtype = "bf16";  // gradient element type: fp32, bf16, fp16, fp8
    int nodes = 0;               // nodes the job runs on
    int gpus_per_node = 8;       // ranks per node
    double compute_ms = 0.0;     // forward + backward compute per step, without communication
};

// Bytes per gradient element: fp32 4, bf16/fp16 2, fp8 1; empty for an unknown name.
std::optional<double> dtype_bytes(std::string_view dtype);

// The ring all-reduce's bus factor 2(n-1)/n (nccl-tests doc/PERFORMANCE.md); 0 for n < 2.
double ring_factor(long ranks);

struct StepEstimate {
    double gradient_bytes = 0.0;
    long ranks = 0;
    double ring_factor = 0.0;
    double busbw_gbps = 0.0;  // per-rank bus bandwidth used, decimal GB/s
    double allreduce_s = 0.0;
    double compute_s = 0.0;
    double step_s = 0.0;         // compute + all-reduce (no overlap)
    double utilization = 0.0;    // compute / step, 0..1
    bool network_bound = false;  // all-reduce takes longer than compute
};

// Errors name the offending input (non-positive params/nodes/bandwidth, unknown dtype).
core::Result<StepEstimate> estimate_step(const JobProfile& job, double busbw_gbps);

// The all-reduce time for 2, 4, 8, ... ranks up to job.nodes * job.gpus_per_node (always ending
// with that count): shows the time growing toward 2 x bytes / busBW.
std::vector<StepEstimate> ring_scaling(const JobProfile& job, double busbw_gbps);

// Launching with every measured node vs without the flagged (verdict fail) ones. Bulk-synchronous
// training runs at the pace of its slowest rank, so each side uses the minimum busBW of its pool.
struct FleetImpact {
    std::string check;  // the collective check whose busbw_gbps was used
    int measured = 0;   // nodes with a busBW value
    int flagged = 0;    // of those, verdict fail
    std::string slowest_node;
    std::string slowest_kept_node;  // slowest node that is not flagged; empty when none
    StepEstimate with_all;
    std::optional<StepEstimate> without_flagged;  // empty when every measured node is flagged
    double slowdown = 0.0;                        // with_all.step_s / without_flagged.step_s - 1
    double gpu_hours_lost_per_day = 0.0;          // ranks x 24 h x (1 - without / with)
};

// check empty: the first check (by name) that has busbw_gbps on any node. job.nodes <= 0 means the
// number of nodes in the report.
core::Result<FleetImpact> estimate_fleet(const JobProfile& job, const RunReport& report,
                                         const std::string& check = "");

// The job profile a run's config names under "job" ({params, dtype, nodes, gpus_per_node,
// compute_ms}); empty when there is none or it is incomplete.
std::optional<JobProfile> job_profile_from_config(const nlohmann::json& config);

// Checks that report busbw_gbps on at least one node, sorted by name.
std::vector<std::string> busbw_checks(const RunReport& report);

// Plain-text renderings used by `preflight estimate` and the text report; end in a newline.
std::string render_step_estimate(const JobProfile& job, const StepEstimate& estimate);
std::string render_fleet_impact(const JobProfile& job, const FleetImpact& impact);

// "40.0 ms", "4.00 s": three significant digits, milliseconds under one second.
std::string format_duration(double seconds);
// "440 MB", "14.0 GB": decimal units.
std::string format_bytes(double bytes);

}  // namespace preflight::outcome
