// `preflight ledger show | history | diff | import` (ledger/ledger.hpp): JSON with --json, text
// otherwise. Reading commands never create a ledger; import records a saved report.json.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/cli/cli_common.hpp"
#include "core/config.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

// Where preflight's ledger lives when neither --ledger nor $PREFLIGHT_LEDGER says.
inline constexpr const char* k_default_ledger_url = "sqlite:/var/lib/preflight/ledger.sqlite";

SubcommandRun add_ledger_commands(CLI::App& app);

// `preflight certify --ledger` (Slurm and Kubernetes): records the validation run as a
// certification: the nodes in `decided` pass or fail, the rest get none. An unusable ledger is
// logged with the command that records the saved report later; the certification itself stands.
void record_certification(const std::string& url, const outcome::RunReport& validation,
                          const std::map<std::string, core::Verdict>& decided,
                          const core::LedgerConfig& cfg, const std::string& report_path);

}  // namespace preflight::controller
