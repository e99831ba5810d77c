// Slurm hostlist syntax: "gpu[001-064,100],login1" <-> explicit node names. Zero padding is kept
// (width of the lower bound), as scontrol show hostnames/hostlist do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

// Expands a hostlist expression; errors name the offending 1-based position ("unbalanced '[' at 4"
// for "gpu[1-2"). Order is preserved; duplicates are kept as written; "" expands to no names; more
// than 1,000,000 names is an error.
Result<std::vector<std::string>> expand_hostlist(std::string_view expr);

// Compresses names into the shortest bracket form, grouping by prefix and zero-padding width,
// first occurrence order of prefixes, ranges sorted and merged. Names not ending in digits are kept
// as they are. expand_hostlist(compress_hostlist(x)) yields each distinct name of x once.
std::string compress_hostlist(const std::vector<std::string>& names);

}  // namespace preflight::core
