// `preflight certify`: one subcommand for both schedulers. Without --k8s it certifies Slurm nodes
// (--nodes HOSTLIST, through a maintenance reservation: cli_slurm.cpp); with --k8s it certifies
// Kubernetes nodes tainted preflight.dev/uncertified (cli_k8s.cpp). Options of the other flow are
// refused, so a command line never silently means something else.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/cli/cli_common.hpp"

namespace preflight::controller {

// Registers `certify`; the returned function runs it when it was parsed.
SubcommandRun add_certify_command(CLI::App& app);

}  // namespace preflight::controller
