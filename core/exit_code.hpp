// The one table of exit codes shared by every binary (preflight, preflight-agent, the prolog and
// the scale harness): operators page on these numbers, so each means the same thing everywhere.
#pragma once

#include <string_view>

namespace preflight::core {

enum class ExitCode : int {
    ok = 0,            // every node passed
    failed = 1,        // nodes failed (actions planned, or applied with --apply)
    usage = 2,         // usage or configuration error: nothing ran
    breaker = 3,       // the circuit breaker refused to act
    inconclusive = 4,  // could not judge enough nodes (errors, a noisy cohort, interrupted)
    warnings = 5,      // warnings only
    incomplete = 6,    // the job could not be completed, e.g. certification without a partner
};

constexpr int to_int(ExitCode code) {
    return static_cast<int>(code);
}

// The table as --help prints it: one line per code.
constexpr std::string_view k_exit_code_help =
    "Exit codes: 0 all pass; 1 nodes failed; 2 usage or config error; 3 circuit breaker "
    "refused; 4 inconclusive; 5 warnings only; 6 incomplete";

}  // namespace preflight::core
