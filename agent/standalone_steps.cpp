#include "agent/standalone.hpp"

#include <cstdio>

#include "agent/stop_signal.hpp"
#include "core/checked_number.hpp"
#include "core/model.hpp"

namespace preflight::agent {

namespace {

// The cache, planner and ledger lines under the verdict line.
void print_memory(const StandaloneOutcome& outcome) {
    if (outcome.cache.is_object() && outcome.cache.value("reused", false)) {
        std::fprintf(stderr, "  cache: reused the pass of %s (%.0f s old; %s)\n",
                     outcome.cache.value("from", std::string()).c_str(),
                     outcome.cache.value("age_s", 0.0),
                     outcome.cache.value("why", std::string()).c_str());
    }
    if (outcome.plan.is_object()) {
        for (const auto& s : outcome.plan["skipped_for_budget"]) {
            const auto last = s["last_run_at"];
            std::fprintf(stderr, "  skipped for the budget: %s (expected %.1f s; last ran %s)\n",
                         s.value("check", std::string()).c_str(), s.value("expected_s", 0.0),
                         last.is_string() ? last.get<std::string>().c_str() : "never");
        }
    }
    if (outcome.ledger.is_object() && outcome.ledger.contains("error")) {
        std::fprintf(stderr, "  ledger NOT written: %s\n",
                     outcome.ledger.value("error", std::string()).c_str());
    }
}

}  // namespace

// Options the run cannot go on with: exit 2 with the reason on stderr; nullopt when they are fine.
std::optional<int> refuse_bad_options(const StandaloneOptions& options,
                                      const StandaloneHooks& hooks) {
    const bool health = options.profile == "health";
    if (!(options.budget_s > 0.0)) {
        std::fprintf(stderr, "preflight-agent: --budget-s must be > 0\n");
        return 2;
    }
    // CLI11's range checks let NaN through; a budget of 1e300 s would overflow as milliseconds.
    if (auto st = core::check_duration_s(options.budget_s, "--budget-s"); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return 2;
    }
    if (options.max_action_fraction) {
        if (auto st = core::finite_in_range(*options.max_action_fraction, 0.0, 1.0,
                                            "--max-action-fraction");
            !st) {
            std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
            return 2;
        }
    }
    if (health && options.on_error == OnError::block) {
        std::fprintf(stderr,
                     "preflight-agent: --profile health never drains for a check that could not "
                     "judge; --on-error block is for the prolog, epilog and gate\n");
        return 2;
    }
    if (health && (options.cache_ttl_s > 0.0 || options.plan_budget || !options.ledger.empty())) {
        std::fprintf(stderr,
                     "preflight-agent: --cache-ttl, --plan-budget and --ledger are for the prolog "
                     "and epilog; a health check measures every time\n");
        return 2;
    }
    if (health && options.resume_after < 1) {
        std::fprintf(stderr, "preflight-agent: --resume-after must be >= 1\n");
        return 2;
    }
    if ((health && (!hooks.lock_health || !hooks.apply_health)) ||
        (options.drain && !hooks.drain)) {
        std::fprintf(stderr, "preflight-agent: %s needs the Slurm integration, not in this build\n",
                     health ? "--profile health" : "--drain");
        return 2;
    }
    return std::nullopt;
}

// The health check's per-node lock into lock; an exit code when this run must not go on (0:
// another health check of this node still runs).
std::optional<int> lock_health_check(const StandaloneOptions& options, const StandaloneHooks& hooks,
                                     const std::string& node, core::UniqueFd& lock) {
    auto taken = hooks.lock_health(options.state_dir, node);
    if (!taken && taken.error().message == "busy") {
        std::fprintf(stderr,
                     "preflight health %s: another health check of this node is still running; "
                     "skipped\n",
                     node.c_str());
        return 0;
    }
    if (!taken) {
        std::fprintf(stderr, "preflight-agent: %s\n", taken.error().message.c_str());
        return 2;
    }
    lock = std::move(taken.value());
    return std::nullopt;
}

// The outcome for the operator (and the prolog's log in slurmd's): verdict, reasons, what was
// drained or not and why, the memory, the health count, and what the exit code means.
void print_outcome(const StandaloneOutcome& outcome, const std::string& node,
                   const StandaloneOptions& options, int rc, int sig) {
    const bool health = options.profile == "health";
    std::fprintf(stderr, "preflight %s %s: %s in %.3f s%s%s\n", options.profile.c_str(),
                 node.c_str(), std::string(core::to_string(outcome.verdict)).c_str(),
                 outcome.seconds, outcome.drain_reason.empty() ? "" : " — ",
                 outcome.drain_reason.c_str());
    for (const auto& r : outcome.reasons) {
        std::fprintf(stderr, "  %s\n", r.c_str());
    }
    if (!outcome.drain_error.empty()) {
        std::fprintf(stderr, "  not drained (%s): %s\n", outcome.drain_outcome.c_str(),
                     outcome.drain_error.c_str());
    }
    print_memory(outcome);
    if (health) {
        std::fprintf(stderr, "  health: %s\n",
                     outcome.health.value("detail", std::string()).c_str());
    }
    if (sig != 0) {
        std::fprintf(stderr, "  %s: exit %d, nothing drained\n", interrupted_detail(sig).c_str(),
                     rc);
    } else if (outcome.verdict == core::Verdict::error && !health) {
        std::fprintf(stderr, "  could not judge: exit %d (--on-error=%s)\n", rc,
                     options.on_error == OnError::block ? "block" : "allow");
    }
}

}  // namespace preflight::agent
