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
    run_error = 4,     // preflight could not finish its own work (a report not written, a test
                       // bed not built): like inconclusive, nothing may be concluded from the run
    warnings = 5,      // warnings only
    incomplete = 6,    // the job could not be completed, e.g. certification without a partner
};

constexpr int to_int(ExitCode code) {
    return static_cast<int>(code);
}

// The table as every binary's --help prints it: one line per code. README's table says the same.
constexpr std::string_view k_exit_code_help =
    "Exit codes (the same for every preflight binary):\n"
    "  0  every node passed\n"
    "  1  nodes failed (actions planned, or applied with --apply)\n"
    "  2  usage or configuration error: nothing ran\n"
    "  3  the circuit breaker refused to act\n"
    "  4  inconclusive or run error: nodes could not be judged (error, unreachable, a cohort\n"
    "     too small or too noisy, interrupted), or preflight could not finish its own work\n"
    "     (e.g. a report not written); no action on what was not judged\n"
    "  5  warnings only\n"
    "  6  incomplete: a check could not be completed (e.g. a collective with no partner)\n"
    "When several apply: 3, then 1, 4, 6, 5.";

}  // namespace preflight::core
