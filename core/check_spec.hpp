// What a check is, as data: the one place check knowledge lives (the table of built-in checks in
// plugins/registry.cpp holds one CheckSpec per check). Nothing in the controller, the agent or the
// reports infers a check's phase, metric or judgement from its name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"

namespace preflight::core {

// The metric every collective is judged on: bus bandwidth in GB/s (1e9 B/s), as nccl-tests
// reports it (doc/PERFORMANCE.md).
inline constexpr std::string_view k_busbw_metric = "busbw_gbps";

// When a check runs: on each node alone (round 0), or across nodes in groups (rounds 1-3).
enum class Phase { node_local, collective };

// How a check's metric is judged.
//  - absolute: the check judges itself on the node (expected values, floors in its params);
//  - fleet: the controller's judge compares the metric with the cohort median;
//  - both: the check's own verdict stands and the judge also compares with the cohort.
enum class Judged { absolute, fleet, both };

struct MetricSpec {
    std::string name{};  // empty: the check has no judged metric
    std::string unit{};  // "GB/s", "Mb/s", ...
};

struct CheckSpec {
    std::string name{};    // "collective.gloo_allreduce"
    std::string family{};  // "collective", "link", "gpu", "exec"
    Phase phase = Phase::node_local;
    std::string summary{};  // one line for `preflight checks list`
    std::vector<ParamSpec> params{};
    MetricSpec metric{};
    Judged judged = Judged::absolute;
    // Takes a counter baseline before the collectives and judges growth after them (a `phase`
    // parameter with "begin"/"end"), e.g. pause and InfiniBand error counters.
    bool brackets_collectives = false;
    // Metrics that are settings (MTU, link rate, DCQCN enables): compared across the cohort for
    // drift, never judged against a median. Each is a pattern over the metric's name: `*` matches
    // any run of characters, `?` exactly one ("*.mtu" takes "eth0.mtu" but not "mtu").
    std::vector<std::string> settings{};
    // What the check needs from the scheduler: GPUs allocated to the agent (launchers ask for
    // them: srun --gres/--gpus-per-node, the pod's nvidia.com/gpu) and an MPI launch (srun --mpi).
    bool uses_gpus = false;
    bool uses_mpi = false;

    bool fleet_judged() const { return judged != Judged::absolute && !metric.name.empty(); }
    // Whether metric_name matches one of settings.
    bool is_setting(std::string_view metric_name) const;
};

// Whether text matches pattern, where `*` matches any run of characters (also none) and `?`
// exactly one; every other character matches itself.
bool glob_match(std::string_view pattern, std::string_view text);

constexpr std::string_view to_string(Phase phase) {
    return phase == Phase::node_local ? "node-local" : "collective";
}
constexpr std::string_view to_string(Judged judged) {
    switch (judged) {
        case Judged::absolute:
            return "absolute";
        case Judged::fleet:
            return "fleet";
        case Judged::both:
            return "both";
    }
    return "absolute";
}

}  // namespace preflight::core
