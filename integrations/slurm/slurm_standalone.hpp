// The Slurm side of the agent's standalone profiles (agent/standalone.hpp): the prolog's drain of
// a failed node (--drain) and slurm.conf's HealthCheckProgram (--profile health, which drains on
// failure and resumes its own drain after --resume-after consecutive passes; slurm/health.md).
#pragma once

#include <string>

#include "agent/standalone.hpp"
#include "core/config.hpp"
#include "core/process.hpp"
#include "core/result.hpp"
#include "core/unique_fd.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::agent {

// Drains `node` for a failed (or blocked) prolog through outcome::apply_slurm_drain with the fixed
// reason of outcome.finding and the figures as Comment; sets drain_* in outcome. The policy is the
// run configuration's breaker with the options' overrides.
outcome::DrainOutcome drain_for_prolog(StandaloneOutcome& outcome, const std::string& node,
                                       const std::string& run, const StandaloneOptions& options,
                                       const core::ActionsConfig& actions,
                                       core::CommandRunner& runner);

// --profile health (standalone_health.cpp; its state file in standalone_health.hpp). Takes
// <state_dir>/health-<node>.lock (flock, not blocking). Error "busy" when another run holds
// it; any other error names the path.
core::Result<core::UniqueFd> lock_health_state(const std::string& state_dir,
                                               const std::string& node);

// Counts, drains and resumes after the checks of one health run (outcome judged; judged false when
// the run was interrupted) and saves the state (a state that cannot be saved is logged: the next
// run counts from 0 and resumes nothing). Fills outcome.health. Returns the exit code: 0 pass or
// could not judge, 1 fail, 3 the circuit breaker refused to drain.
int apply_health(StandaloneOutcome& outcome, const std::string& node, bool judged,
                 const StandaloneOptions& options, const core::ActionsConfig& actions,
                 core::CommandRunner& runner);

// The hooks run_standalone takes from Slurm: drain_for_prolog, lock_health_state, apply_health.
StandaloneHooks slurm_standalone_hooks();

}  // namespace preflight::agent
