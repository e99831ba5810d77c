// Slurm parts of the `preflight` command line: `hostlist expand|compress`, `certify --nodes`, and
// the `run --launcher slurm` options (--partition, --reservation, --srun, --immediate).
#pragma once

#include <functional>
#include <optional>

#include <CLI/CLI.hpp>

#include "controller/run/orchestrator.hpp"

namespace preflight::controller {

// Registers the subcommands; the returned function runs the one that was parsed (after logging is
// set up) and gives its exit code, or nullopt when none of ours was parsed.
std::function<std::optional<int>(const std::string& log_level, bool log_json)> add_slurm_commands(
    CLI::App& app);

// `run` options for --launcher slurm, stored in `slurm`.
void add_slurm_run_options(CLI::App* run_cmd, SlurmLaunchOptions& slurm);

// Before run_preflight with --launcher slurm: allocation detection and node addresses from
// Slurm. Returns an exit code when the run cannot go on.
std::optional<int> prepare_slurm_run(RunOptions& options);

}  // namespace preflight::controller
