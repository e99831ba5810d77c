// The judge stage (ARCHITECTURE.md "The one rule"): per node and check, the node's own result, then
// for checks judged against the fleet the verdict of core::judge_cohorts with the reference it
// used. The group rounds called the same judge on the same node figures (an unconfirmed suspect
// keeps its figure in the reference and stays `error`), so both agree on every node. Missing data
// never passes: a node without a result for a check it should have run is `error`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

struct NodeInput {
    core::Node node;
    std::map<std::string, core::CheckResult> results;  // check -> result (node-level)
    std::string unreachable;  // non-empty: the agent never connected, with the reason
};

// The metric a check is judged on against the cohort; nullopt for checks that judge themselves
// (link checks compare against expected values on the node).
std::optional<std::string> judged_metric(const std::string& check);

// The inputs' results are moved into the reports.
std::vector<outcome::NodeReport> evaluate(std::vector<NodeInput> inputs,
                                          const std::vector<std::string>& checks,
                                          const core::EvaluationConfig& config);

}  // namespace preflight::controller
