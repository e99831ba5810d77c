// What every report says of a run's time budget (`preflight run --budget-s`, kept in the report's
// ledger section as "budget"): the checks left out for it, why, and when each last ran on these
// nodes; and, when the run reached the budget before it finished, that it stopped there.
#pragma once

#include <string>
#include <vector>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

// A check the budget left out, as report.ledger.budget.skipped_for_budget lists it.
struct LeftOutForBudget {
    std::string check;
    double expected_s = 0.0;
    std::string last_ran;  // when it last ran on every one of these nodes, or "never on some ..."
};

// Empty when the run had no budget or left nothing out. Entries that are not well formed (a
// report edited by hand) are skipped.
std::vector<LeftOutForBudget> left_out_for_budget(const RunReport& report);

// Empty when the run had no budget. Plain sentences: renderers sanitize and format them.
std::vector<std::string> budget_notices(const RunReport& report);

}  // namespace preflight::outcome
