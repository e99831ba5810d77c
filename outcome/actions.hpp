// Remediation, kept apart from detection: plan_actions turns failed nodes into actions (always, so
// a dry run shows them), apply_actions (sink.hpp) carries them out through the action sinks (only
// with --apply), exit_code_for maps the outcome to the process exit code. Every reason we write
// is a fixed "preflight: <class>" text (reasons.hpp), so that we only ever resume or untaint what
// we marked ourselves; the figures go to the Slurm node Comment and the Kubernetes Event.
#pragma once

#include <string>
#include <string_view>

#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/process.hpp"
#include "outcome/breaker.hpp"
#include "outcome/reasons.hpp"
#include "outcome/run_report.hpp"
#include "outcome/sink.hpp"

namespace preflight::outcome {

inline constexpr std::string_view k_breaker_error = "circuit breaker tripped";

// Replaces report.actions and report.breaker. For every node whose verdict is fail and every
// target in cfg.targets: an action for that target's sink (Action::kind its kind(), its own part
// filled by its plan(): the scontrol argv with the fixed reason and the figures as Comment for
// slurm, the Node patch with preflight's taint for k8s); a target with no sink among `sinks`: an
// action with kind "none" and an error naming the unknown target.
// The circuit breaker trips when the failed nodes outnumber allowed_actions (breaker.hpp):
// max(min_actions, floor(max_action_fraction * nodes)), at most max_actions; the actions are still
// planned (never on reference nodes, which the breaker does not count either) but carry the error
// "circuit breaker tripped" and are never applied.
void plan_actions(RunReport& report, const core::ActionsConfig& cfg,
                  std::span<ActionSink* const> sinks);

// With --force: a tripped breaker is overridden — its refusal is lifted from the actions, the
// breaker is marked forced and its message says so (the report keeps both). Nothing otherwise.
void force_past_breaker(RunReport& report);

// The process exit code (core::ExitCode as an int): breaker when the breaker tripped and was not
// forced, or when an action was refused by the breaker at the sink, else failed when any node
// failed, else inconclusive when any node is error or has an inconclusive result, else incomplete
// when a check could not be completed (no partner), else warnings when any node warns, else ok.
// Reference nodes count like any other.
int exit_code_for(const RunReport& report);

}  // namespace preflight::outcome
