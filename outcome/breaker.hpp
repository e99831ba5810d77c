// The circuit breaker's arithmetic, shared by every path that takes nodes out of service: the
// controller's plan (failed nodes of one run), and each Slurm drain and Kubernetes taint (nodes
// already marked by preflight in the partition or cluster, plus the one about to be). A fabric or
// baseline problem makes many nodes look bad at once; draining half a cluster for that is worse
// than draining nothing. Pure.
#pragma once

#include <string>
#include <string_view>

#include "core/config.hpp"

namespace preflight::outcome {

struct BreakerPolicy {
    double max_fraction = 0.10;  // share of the nodes that may carry our mark
    int min_actions = 1;         // ... but always this many (small clusters)
    int max_actions = 0;         // absolute cap over the share and min_actions; 0: none
    bool force = false;          // --force: act anyway, and say so
};

// The policy of a run configuration's `actions` section.
BreakerPolicy breaker_policy(const core::ActionsConfig& cfg, bool force = false);

// How many of `total` nodes may carry our mark: max(min_actions, floor(max_fraction * total)),
// then at most max_actions when that is set. A negative or non-finite fraction counts as 0, one
// over 1 as 1.
int allowed_actions(const BreakerPolicy& policy, int total);

// One drain or taint checked against the nodes already marked by us.
struct MarkCount {
    int marked = 0;     // nodes in scope carrying our mark, counting the one about to be marked
    int total = 0;      // nodes in scope
    std::string scope;  // "partition batch", "cluster"
};

struct BreakerDecision {
    bool refused = false;  // over the cap and not forced
    bool forced = false;   // over the cap, and --force overrode it
    int allowed = 0;
    std::string message;  // set when over the cap: the counts, plainly
};

BreakerDecision check_breaker(const BreakerPolicy& policy, const MarkCount& count,
                              std::string_view node);

}  // namespace preflight::outcome
