// Remediation, kept apart from detection: plan_actions turns failed nodes into actions (always, so
// a dry run shows them), apply_actions (sink.hpp) carries them out through the action sinks (only
// with --apply), exit_code_for maps the outcome to the process exit code. Every reason we write
// starts with "preflight:" so that we only ever resume or untaint what we marked ourselves.
#pragma once

#include <string>
#include <string_view>

#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/process.hpp"
#include "outcome/action_commands.hpp"
#include "outcome/run_report.hpp"
#include "outcome/sink.hpp"

namespace preflight::outcome {

inline constexpr std::string_view k_reason_prefix = "preflight:";
inline constexpr std::size_t k_max_reason_bytes = 128;
inline constexpr std::string_view k_breaker_error = "circuit breaker tripped";

// Replaces report.actions and report.breaker. For every node whose verdict is fail and every
// target:
//  - slurm: kind "drain", argv slurm_drain_argv(scontrol, node, reason);
//  - k8s:   kind "taint", patch {"spec":{"taints":[degraded_taint(<failing check>)]}}. spec.taints
//  is
//           replaced wholesale by a merge patch, so the k8s sink must read the node and merge this
//           entry into its existing taints before sending it;
//  - any other target: an action with kind "none" and an error naming the unknown target.
// The circuit breaker trips when the failed nodes outnumber max(min_actions,
// floor(max_action_fraction * nodes)) (reference nodes are never targets and not counted); the actions are still planned but carry the error
// "circuit breaker tripped" and are never applied.
void plan_actions(RunReport& report, const core::ActionsConfig& cfg);

// With --force: a tripped breaker is overridden — its refusal is lifted from the actions, the
// breaker is marked forced and its message says so (the report keeps both). Nothing otherwise.
void force_past_breaker(RunReport& report);

// The process exit code (core::ExitCode as an int): breaker when the breaker tripped and was not
// forced, else failed when any node failed, else inconclusive when any node is error or has an
// inconclusive result, else incomplete when a check could not be completed (no partner), else
// warnings when any node warns, else ok. Reference nodes count like any other.
int exit_code_for(const RunReport& report);

// The drain reason for a failed node: "preflight: <check> <metric> <value> < <pct>% of median
// <median> (run <id>)" for a median failure, else the node's first reason (prefixed). At most
// k_max_reason_bytes, no control characters, truncated with "…" on a UTF-8 boundary.
std::string reason_for(const NodeReport& node, const std::string& run_id);

// Any text made into a valid reason: prefixed with "preflight: " unless it already is, control
// characters and invalid UTF-8 replaced, truncated to k_max_reason_bytes with "…" on a UTF-8
// boundary. A " (run ...)" suffix is kept when the text must be truncated.
std::string sanitize_reason(std::string_view text, std::string_view suffix = {});

}  // namespace preflight::outcome
