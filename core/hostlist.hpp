// Slurm hostlist syntax: "gpu[001-064,100],login1" <-> explicit node names. Zero padding is kept
// (width of the lower bound), as scontrol show hostnames/hostlist do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

// Expands a hostlist expression to the names `scontrol show hostnames` prints, in its order:
// hosts are separated by ',', space, tab or newline outside brackets (empty items are skipped);
// "[1-3,7]" lists zero-padded numbers (width of the lower bound); several bracket groups multiply;
// duplicates are kept; text may follow the last bracket (Slurm 23.02.5 and later). Where Slurm
// 22.05 would garble the input (an unclosed '[', a stray ']', "n[1-]", "n[+1]", blanks in a
// range) this refuses it. Errors name the bad part and its 1-based position ("unbalanced '[' at
// 4" for "gpu[1-2"). More than 1,000,000 names is an error. The table of patterns compared with
// scontrol is tests/fixtures/hostlist/patterns.tsv.
Result<std::vector<std::string>> expand_hostlist(std::string_view expr);

// Compresses names into the shortest bracket form, grouping by prefix and zero-padding width,
// first occurrence order of prefixes, ranges sorted and merged. Names not ending in digits are kept
// as they are. expand_hostlist(compress_hostlist(x)) yields each distinct name of x once.
std::string compress_hostlist(const std::vector<std::string>& names);

}  // namespace preflight::core
