// The exact scontrol commands preflight's Slurm actions carry, built here and nowhere else: the
// drain and the resume (argv, never a shell line).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace preflight::outcome {

// {scontrol, "update", "NodeName=<node>", "State=DRAIN", "Reason=<reason>"}, and
// "Comment=<comment>" when a comment is given (the figures behind the reason; Slurm 22.05's
// `scontrol update` documents a node Comment). Both are sanitized by the caller (reasons.hpp).
std::vector<std::string> slurm_drain_argv(std::string_view scontrol, std::string_view node,
                                          std::string_view reason, std::string_view comment = {});

// {scontrol, "update", "NodeName=<node>", "State=RESUME"}, and "Comment=" (clears it) when
// clear_comment: the caller clears only a comment we wrote.
std::vector<std::string> slurm_resume_argv(std::string_view scontrol, std::string_view node,
                                           bool clear_comment = false);

}  // namespace preflight::outcome
