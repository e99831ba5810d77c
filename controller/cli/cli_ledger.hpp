// `preflight ledger show | history | diff | import` (ledger/ledger.hpp): JSON with --json, text
// otherwise. Reading commands never create a ledger; import records a saved report.json.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/commands/certification_record.hpp"
#include "controller/commands/commands.hpp"
#include "core/config.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

SubcommandRun add_ledger_commands(CLI::App& app);

}  // namespace preflight::controller
