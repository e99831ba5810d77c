// The `preflight` command line: run, demo and fabric subcommands. Exit codes as in DESIGN.md:
// 0 all pass, 1 nodes failed, 2 usage/config error, 3 circuit breaker refused, 4 inconclusive.
#pragma once

namespace preflight::controller {

inline constexpr int k_exit_usage = 2;

int preflight_main(int argc, char** argv);

}  // namespace preflight::controller
