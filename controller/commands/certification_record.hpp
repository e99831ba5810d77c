// Recording a certification in the ledger, shared by the certification flows of every scheduler.
#pragma once

#include <map>
#include <string>

#include "core/model.hpp"
#include "core/run_config.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

// Where preflight's ledger lives when neither --ledger nor $PREFLIGHT_LEDGER says.
inline constexpr const char* k_default_ledger_url = "sqlite:/var/lib/preflight/ledger.sqlite";

// `preflight certify --ledger` (Slurm and Kubernetes): records the validation run as a
// certification: the nodes in `decided` pass or fail, the rest get none. An unusable ledger is
// logged with the command that records the saved report later; the certification itself stands.
void record_certification(const std::string& url, const outcome::RunReport& validation,
                          const std::map<std::string, core::Verdict>& decided,
                          const core::LedgerConfig& cfg, const std::string& report_path);

}  // namespace preflight::controller
