// `preflight certify`: one subcommand for every scheduler. The common options are here; each
// integration adds its own and runs its flow when they choose it (integrations/registry.hpp):
// without --k8s Slurm nodes (--nodes HOSTLIST, through a maintenance reservation), with --k8s
// Kubernetes nodes tainted preflight.dev/uncertified. Options of the other flow are refused, so a
// command line never silently means something else.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"
#include "integrations/registry.hpp"

namespace preflight::controller {

// Registers `certify`; the returned function runs it when it was parsed.
SubcommandRun add_certify_command(CLI::App& app, const std::vector<integrations::Integration>& all);

}  // namespace preflight::controller
