// What every report says of a run's time budget (`preflight run --budget-s`, kept in the report's
// ledger section as "budget"): the checks left out for it, why, and when each last ran on these
// nodes; and, when the run reached the budget before it finished, that it stopped there.
#pragma once

#include <string>
#include <vector>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

// Empty when the run had no budget. Plain sentences: renderers sanitize and format them.
std::vector<std::string> budget_notices(const RunReport& report);

}  // namespace preflight::outcome
