// `preflight report` (render a saved report.json in any format of the renderer table) and
// `preflight estimate` (job impact of a busBW figure or of a saved run).
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

// Registers `report` and `estimate`; the returned function runs the one that was parsed.
SubcommandRun add_report_commands(CLI::App& app);

}  // namespace preflight::controller
