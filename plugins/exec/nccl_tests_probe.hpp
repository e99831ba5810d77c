// Whether an nccl-tests binary takes `-J FILE.json` (2.17.3 and later). Older binaries reject the
// unknown option and print their usage instead of testing, so -J is passed only when the usage
// text (`BINARY -h`, handled before MPI starts) lists it.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace preflight::plugins {

// The usage text lists the -J option ("[-J,--output_file <file> ...]").
bool usage_lists_json_option(std::string_view usage);

// Runs `binary -h` with the deadline once per path and modification time in this process and
// remembers the answer; false when it cannot be run or answers late.
bool nccl_tests_supports_json(const std::string& binary, std::chrono::milliseconds deadline);

}  // namespace preflight::plugins
