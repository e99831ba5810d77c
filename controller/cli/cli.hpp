// The `preflight` command line: `run` here, the other subcommands in the cli_*.cpp files (Slurm,
// certify, report and estimate, the test bed). Exit codes are core::ExitCode; --help prints them.
#pragma once

namespace preflight::controller {

int preflight_main(int argc, char** argv);

}  // namespace preflight::controller
