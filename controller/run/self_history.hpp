// The self-history rule (docs/ledger.md): a node whose judged figure fell more than
// drop_fraction below the median of its own recent passing figures gets a warning, even when it
// is within threshold_fraction of today's cohort: slow degradation that the cohort rule cannot
// see. The warning carries both references (the node's own median and the cohort's). It is a warn,
// never acted on; with fewer than min_samples earlier passes there is no judgement at all.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/run_config.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

inline constexpr const char* k_self_history_check = "self_history";

// node -> check -> the node's earlier passing figures of that check's judged metric, newest first
// (ledger::Ledger::recent_values).
using OwnHistory = std::map<std::string, std::map<std::string, std::vector<double>>>;

// Adds a `self_history` check (verdict warn) and a reason per finding to each node that slid, and
// raises its verdict to at least warn. Returns how many nodes got a finding.
int add_self_history(std::vector<outcome::NodeReport>& nodes, const OwnHistory& history,
                     const core::SelfHistoryConfig& config);

}  // namespace preflight::controller
