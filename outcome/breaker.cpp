// The circuit breaker's arithmetic; see breaker.hpp.
#include "outcome/breaker.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace preflight::outcome {

BreakerPolicy breaker_policy(const core::ActionsConfig& cfg, bool force) {
    BreakerPolicy p;
    p.max_fraction = cfg.max_action_fraction;
    p.min_actions = cfg.min_actions;
    p.max_actions = cfg.max_actions;
    p.force = force;
    return p;
}

int allowed_actions(const BreakerPolicy& policy, int total) {
    double fraction = policy.max_fraction;
    if (!std::isfinite(fraction) || fraction < 0.0) {
        fraction = 0.0;
    }
    fraction = std::min(fraction, 1.0);
    // The epsilon keeps e.g. 0.29 * 100 (28.999999999999996 in binary) from allowing only 28.
    const int by_fraction =
        static_cast<int>(std::floor(fraction * static_cast<double>(std::max(total, 0)) + 1e-9));
    int allowed = std::max(std::max(policy.min_actions, 0), by_fraction);
    if (policy.max_actions > 0) {
        allowed = std::min(allowed, policy.max_actions);
    }
    return allowed;
}

BreakerDecision check_breaker(const BreakerPolicy& policy, const MarkCount& count,
                              std::string_view node) {
    BreakerDecision d;
    d.allowed = allowed_actions(policy, count.total);
    if (count.marked <= d.allowed) {
        return d;
    }
    d.message = fmt::format(
        "circuit breaker: marking {} would make {} of {} nodes in the {} taken out by preflight, "
        "more than the allowed {} (max_action_fraction {:.2f}, min_actions {}, max_actions {})",
        node, count.marked, count.total, count.scope, d.allowed, policy.max_fraction,
        policy.min_actions, policy.max_actions > 0 ? std::to_string(policy.max_actions) : "none");
    if (policy.force) {
        d.forced = true;
        d.message += " \xE2\x80\x94 OVERRIDDEN with --force";
    } else {
        d.refused = true;
        d.message += "; left alone \xE2\x80\x94 check the fabric, resume nodes, or raise the caps";
    }
    return d;
}

}  // namespace preflight::outcome
