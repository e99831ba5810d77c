// The prolog's drain through the Slurm sink's own path, and the hooks that give run_standalone the
// Slurm side of its profiles.
#include "integrations/slurm/slurm_standalone.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "integrations/slurm/scontrol_argv.hpp"

namespace preflight::agent {

outcome::DrainOutcome drain_for_prolog(StandaloneOutcome& outcome, const std::string& node,
                                       const std::string& run, const StandaloneOptions& options,
                                       const core::ActionsConfig& actions,
                                       core::CommandRunner& runner) {
    if (outcome.drain_reason.empty()) {
        outcome.drain_reason = std::string(outcome::fixed_reason(outcome.finding));
    }
    outcome::BreakerPolicy policy = outcome::breaker_policy(actions, options.force);
    if (options.max_action_fraction) {
        policy.max_fraction = *options.max_action_fraction;
    }
    if (options.max_actions) {
        policy.max_actions = *options.max_actions;
    }
    outcome::Action action;
    action.node = node;
    action.kind = "drain";
    action.sink = "slurm";
    action.reason = outcome.drain_reason;
    action.argv = outcome::slurm_drain_argv(options.scontrol, node, outcome.drain_reason,
                                            outcome.drain_comment);
    const outcome::SlurmClient client{runner, options.scontrol, std::chrono::seconds(10)};
    const auto result = outcome::apply_slurm_drain(action, client, policy);
    switch (result) {
        case outcome::DrainOutcome::drained:
            outcome.drain_outcome = "drained";
            break;
        case outcome::DrainOutcome::left_alone:
            outcome.drain_outcome = "left_alone";
            break;
        case outcome::DrainOutcome::refused:
            outcome.drain_outcome = "refused";
            break;
        case outcome::DrainOutcome::failed:
            outcome.drain_outcome = "failed";
            break;
    }
    outcome.drain_error = action.error;
    spdlog::debug("prolog {} ({}): {}", node, run, outcome.drain_outcome);
    return result;
}

StandaloneHooks slurm_standalone_hooks() {
    StandaloneHooks hooks;
    hooks.drain = [](StandaloneOutcome& outcome, const std::string& node, const std::string& run,
                     const StandaloneOptions& options, const core::ActionsConfig& actions,
                     core::CommandRunner& runner) {
        return drain_for_prolog(outcome, node, run, options, actions, runner) ==
               outcome::DrainOutcome::refused;
    };
    hooks.lock_health = &lock_health_state;
    hooks.apply_health = &apply_health;
    return hooks;
}

}  // namespace preflight::agent
