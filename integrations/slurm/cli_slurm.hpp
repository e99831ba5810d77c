// Slurm parts of the `preflight` command line: `hostlist expand|compress`, `slurm check-prolog`,
// the Slurm flow of `certify --nodes`, and the `run --launcher slurm` options (--partition,
// --reservation, --srun, --immediate).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"
#include "controller/run/orchestrator.hpp"
#include "integrations/slurm/slurm_step.hpp"

namespace preflight::controller {

// Registers the `hostlist` and `slurm check-prolog` subcommands; the returned function runs the
// one that was parsed.
SubcommandRun add_slurm_commands(CLI::App& app);

// `run` options for --launcher slurm, stored in `slurm`.
void add_slurm_run_options(CLI::App* run_cmd, SlurmLaunchOptions& slurm);

// Before run_preflight with --launcher slurm: allocation detection (into `slurm`) and node
// addresses from Slurm. Returns an exit code when the run cannot go on.
std::optional<int> prepare_slurm_run(RunOptions& options, SlurmLaunchOptions& slurm);

// The certification options of Slurm's flow, beside the common ones (CertifyArgs).
struct SlurmCertifyArgs {
    std::string agent;
    std::string scontrol = "scontrol";
    int minutes = 30;
    bool json = false;
    SlurmLaunchOptions slurm;
};
void add_slurm_certify_options(CLI::App& certify, SlurmCertifyArgs& args);

// `certify` without --k8s: validates the drained nodes inside a maintenance reservation and
// resumes those that pass.
int certify_slurm_main(const CertifyArgs& args, const SlurmCertifyArgs& slurm,
                       const std::string& log_level, bool log_json);

}  // namespace preflight::controller
