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

// When several codes apply, the one to exit with (the order --help states): usage, breaker,
// failed, inconclusive/run error, incomplete, warnings, ok.
constexpr ExitCode worse(ExitCode a, ExitCode b) {
    auto rank = [](ExitCode c) {
        switch (c) {
            case ExitCode::usage:
                return 6;
            case ExitCode::breaker:
                return 5;
            case ExitCode::failed:
                return 4;
            case ExitCode::inconclusive:
                return 3;
            case ExitCode::incomplete:
                return 2;
            case ExitCode::warnings:
                return 1;
            case ExitCode::ok:
                return 0;
        }
        return 3;
    };
    return rank(b) > rank(a) ? b : a;
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
