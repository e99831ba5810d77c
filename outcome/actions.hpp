// Remediation, kept apart from detection: plan_actions turns failed nodes into actions (always, so
// a dry run shows them), apply_actions carries them out (only with --apply), exit_code_for maps the
// outcome to the process exit code. Every reason we write starts with "preflight:" so that we only
// ever resume or untaint what we marked ourselves.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "core/config.hpp"
#include "core/process.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

inline constexpr std::string_view k_reason_prefix = "preflight:";
inline constexpr std::size_t k_max_reason_bytes = 128;
inline constexpr std::string_view k_taint_key = "preflight.dev/degraded";
inline constexpr std::string_view k_breaker_error = "circuit breaker tripped";
inline constexpr std::string_view k_k8s_unavailable =
    "kubernetes sink not configured: planned only";

// Replaces report.actions and report.breaker. For every node whose verdict is fail and every
// target:
//  - slurm: kind "drain", argv {scontrol, "update", "NodeName=<node>", "State=DRAIN",
//  "Reason=<r>"};
//  - k8s:   kind "taint", patch {"spec":{"taints":[{"key":"preflight.dev/degraded",
//           "value":<failing check as a label value>,"effect":"NoSchedule"}]}}. spec.taints is
//           replaced wholesale by a merge patch, so the k8s sink must read the node and merge this
//           entry into its existing taints before sending it;
//  - any other target: an action with kind "none" and an error naming the unknown target.
// The circuit breaker trips when the failed nodes outnumber max(min_actions,
// floor(max_action_fraction * nodes)); the actions are still planned but carry the error
// "circuit breaker tripped" and are never applied.
void plan_actions(RunReport& report, const core::ActionsConfig& cfg);

// Carries out one k8s action (controller/k8s/node_sink.hpp make_action_sink): sets applied or
// error.
using K8sActionSink = std::function<void(const RunReport&, Action&)>;

// With --force: a tripped breaker is overridden — its refusal is lifted from the actions, the
// breaker is marked forced and its message says so (the report keeps both). Nothing otherwise.
void force_past_breaker(RunReport& report);

// Carries out the planned actions (call only with --apply). Nothing when the breaker tripped,
// unless force_past_breaker overrode it.
// slurm: argv through runner with the timeout; applied on exit 0, else error
// "scontrol: <describe> <first output line>". k8s: through k8s_sink; without one, not applied,
// error k_k8s_unavailable. Actions already applied are left alone.
void apply_actions(RunReport& report, core::CommandRunner& runner,
                   std::chrono::milliseconds timeout, const K8sActionSink& k8s_sink = {});

// 3 breaker tripped, else 1 any node failed, else 4 any node inconclusive (error), else 0.
int exit_code_for(const RunReport& report);

// The drain reason for a failed node: "preflight: <check> <metric> <value> < <pct>% of median
// <median> (run <id>)" for a median failure, else the node's first reason (prefixed). At most
// k_max_reason_bytes, no control characters, truncated with "…" on a UTF-8 boundary.
std::string reason_for(const NodeReport& node, const std::string& run_id);

// Any text made into a valid reason: prefixed with "preflight: " unless it already is, control
// characters and invalid UTF-8 replaced, truncated to k_max_reason_bytes with "…" on a UTF-8
// boundary. A " (run ...)" suffix is kept when the text must be truncated.
std::string sanitize_reason(std::string_view text, std::string_view suffix = {});

// A check name as a Kubernetes label value: [A-Za-z0-9._-], at most 63 characters, starting and
// ending alphanumeric; "unknown" when nothing is left.
std::string taint_value_for(std::string_view check);

}  // namespace preflight::outcome
