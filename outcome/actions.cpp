#include "outcome/actions.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "outcome/report/text.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

void plan_actions(RunReport& report, const core::ActionsConfig& cfg,
                  std::span<ActionSink* const> sinks) {
    report.actions.clear();

    std::vector<std::string> targets;
    for (const auto& t : cfg.targets) {
        if (std::find(targets.begin(), targets.end(), t) == targets.end()) {
            targets.push_back(t);
        }
    }

    std::set<std::string> failed;
    for (const auto& node : report.nodes) {
        if (node.verdict != core::Verdict::fail || node.reference) {
            continue;  // a reference node is a partner, never a target
        }
        failed.insert(node.name);
        const std::string reason = reason_for(node);
        const std::string figures = figures_for(node, report.run_id);
        for (const auto& target : targets) {
            Action a;
            a.node = node.name;
            a.reason = reason;
            a.sink = target;
            const ActionSink* sink = nullptr;
            for (const ActionSink* s : sinks) {
                if (s != nullptr && s->name() == target) {
                    sink = s;
                }
            }
            if (sink != nullptr) {
                a.kind = std::string(sink->kind());
                sink->plan(a, node, figures);
            } else {
                // Config validation should have refused this; say so rather than drop the node.
                a.kind = "none";
                a.error = "unknown action target '" + target + "'";
            }
            report.actions.push_back(std::move(a));
        }
    }

    // The breaker exists because a fabric or a baseline problem makes many nodes look bad at once,
    // and draining half a cluster for that is worse than draining nothing.
    Breaker& b = report.breaker;
    b = Breaker{};
    const BreakerPolicy policy = breaker_policy(cfg);
    b.max_action_fraction =
        std::clamp(std::isfinite(policy.max_fraction) ? policy.max_fraction : 0.0, 0.0, 1.0);
    // Reference nodes are partners, never targets: they do not count as candidates either.
    b.candidates =
        static_cast<int>(std::count_if(report.nodes.begin(), report.nodes.end(),
                                       [](const NodeReport& n) { return !n.reference; }));
    // No target (a certification run, which decides itself): nothing is planned, nothing trips.
    b.planned = targets.empty() ? 0 : static_cast<int>(failed.size());
    b.allowed = allowed_actions(policy, b.candidates);
    b.tripped = b.planned > b.allowed;
    if (b.tripped) {
        const double pct = b.candidates > 0 ? 100.0 * b.planned / b.candidates : 0.0;
        b.message = fmt::format(
            "circuit breaker: {} of {} nodes ({:.1f} %) failed, more than the allowed {} "
            "(max_action_fraction {:.2f}{}); no action taken \xE2\x80\x94 check the fabric or "
            "raise "
            "actions.max_action_fraction",
            b.planned, b.candidates, pct, b.allowed, b.max_action_fraction,
            cfg.max_actions > 0 ? fmt::format(", max_actions {}", cfg.max_actions) : "");
        for (auto& a : report.actions) {
            a.applied = false;
            if (a.error.empty()) {
                a.error = std::string(k_breaker_error);
            }
        }
    }
}

void force_past_breaker(RunReport& report) {
    Breaker& b = report.breaker;
    if (!b.tripped || b.forced) {
        return;
    }
    b.forced = true;
    b.message += " \xE2\x80\x94 OVERRIDDEN with --force: acting on all " +
                 std::to_string(b.planned) + " nodes";
    for (auto& a : report.actions) {
        if (a.error == k_breaker_error) {
            a.error.clear();
        }
    }
    spdlog::warn("{}", b.message);
}

int exit_code_for(const RunReport& report) {
    if (report.breaker.tripped && !report.breaker.forced) {
        return core::to_int(core::ExitCode::breaker);
    }
    // A drain or taint the cluster-wide breaker refused (nodes already taken out by preflight).
    for (const auto& a : report.actions) {
        if (!a.applied && a.refused_by_breaker) {
            return core::to_int(core::ExitCode::breaker);
        }
    }
    const VerdictTally counts = tally(report);
    if (counts.fail > 0) {
        return core::to_int(core::ExitCode::failed);
    }
    if (counts.error > 0 || counts.inconclusive > 0) {
        return core::to_int(core::ExitCode::inconclusive);
    }
    if (counts.incomplete > 0) {
        return core::to_int(core::ExitCode::incomplete);
    }
    return core::to_int(counts.warn > 0 ? core::ExitCode::warnings : core::ExitCode::ok);
}

}  // namespace preflight::outcome
