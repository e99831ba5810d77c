// The test-bed subcommands of `preflight` (root only): `demo` builds a namespace fabric with one
// degraded host and runs the pipeline on it; `fabric up|down` creates or removes a fabric.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

// Registers `demo` and `fabric`; the returned function runs the one that was parsed. argv0 is
// this program's path (the demo starts agents next to it).
SubcommandRun add_testbed_commands(CLI::App& app, const char* argv0);

}  // namespace preflight::controller
