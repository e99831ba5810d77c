// `preflight inspect KIND FILE... [--option VALUE]... [--json]`: a saved output judged by the
// same code as the live check (plugins/inspect/inspect.hpp); one subcommand per reader.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

SubcommandRun add_inspect_command(CLI::App& app);

}  // namespace preflight::controller
