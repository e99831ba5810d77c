// Fleet-majority drift: settings that node-local link checks report as metrics (DCQCN enables
// per priority, MTU, link speed and rate, PCIe width, peermem state; each check's spec declares
// which, core::CheckSpec::settings) are compared across each cohort (nodes with the same cohort
// label). A node whose value differs from a strict majority of the cohort's nodes that report the
// setting gets a finding such as "link.roce: eth2: DCQCN off on prio 3 (roce_np); on for 63 of 64
// nodes". Cohorts with fewer than min_cohort reporting nodes, and settings without a strict
// majority, are not judged.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

inline constexpr const char* k_drift_check = "drift";

// Whether a check's metric is a setting that should agree across a cohort: the check's spec in the
// built-in table declares it (core::CheckSpec::settings); false for an unknown check.
bool is_setting_metric(const std::string& check, const std::string& metric);

// node name -> drift findings, in check and metric order; nodes without findings are absent.
std::map<std::string, std::vector<std::string>> drift_findings(
    const std::vector<outcome::NodeReport>& nodes, const core::EvaluationConfig& config);

// Adds each node's drift findings as a `drift` check (verdict warn), a reason per finding, and
// raises the node's verdict to at least warn. Run after evaluate().
void add_drift(std::vector<outcome::NodeReport>& nodes, const core::EvaluationConfig& config);

}  // namespace preflight::controller
