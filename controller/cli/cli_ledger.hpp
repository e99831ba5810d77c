// `preflight ledger show | history | diff | import` (ledger/ledger.hpp): JSON with --json, text
// otherwise. Reading commands never create a ledger; import records a saved report.json.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/cli/cli_common.hpp"

namespace preflight::controller {

// Where preflight's ledger lives when neither --ledger nor $PREFLIGHT_LEDGER says.
inline constexpr const char* k_default_ledger_url = "sqlite:/var/lib/preflight/ledger.sqlite";

SubcommandRun add_ledger_commands(CLI::App& app);

}  // namespace preflight::controller
