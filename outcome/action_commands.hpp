// The exact commands and patches preflight's actions carry, each built here and nowhere else:
// the Slurm drain and resume argv (argv, never a shell line) and the Kubernetes taint we set on a
// failed node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::outcome {

inline constexpr std::string_view k_taint_key = "preflight.dev/degraded";

// {scontrol, "update", "NodeName=<node>", "State=DRAIN", "Reason=<reason>"}, and
// "Comment=<comment>" when a comment is given (the figures behind the reason; Slurm 22.05's
// `scontrol update` documents a node Comment). Both are sanitized by the caller (reasons.hpp).
std::vector<std::string> slurm_drain_argv(std::string_view scontrol, std::string_view node,
                                          std::string_view reason, std::string_view comment = {});

// {scontrol, "update", "NodeName=<node>", "State=RESUME"}, and "Comment=" (clears it) when
// clear_comment: the caller clears only a comment we wrote.
std::vector<std::string> slurm_resume_argv(std::string_view scontrol, std::string_view node,
                                           bool clear_comment = false);

// A check name as a Kubernetes label value: [A-Za-z0-9._-], at most 63 characters, starting and
// ending alphanumeric; "unknown" when nothing is left.
std::string taint_value_for(std::string_view check);

// The taint entry for a node that failed `check`:
// {"key": "preflight.dev/degraded", "value": taint_value_for(check), "effect": "NoSchedule"}.
nlohmann::json degraded_taint(std::string_view check);

}  // namespace preflight::outcome
