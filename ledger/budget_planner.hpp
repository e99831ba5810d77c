// The time-budget planner: given a budget (a 20 s prolog, a 120 s job gate) and what is known of
// each check (ledger::CheckHistory: how long it takes, when it last ran here, whether it failed
// here or on peers), picks the checks to run so that their expected time fits, most valuable
// first, and says for each check left out why and when it last ran.
//   must run: never measured here, or failed or errored here in the window (its value is not
//             known or is in doubt); still left out when its known duration cannot fit;
//   the rest: by value = staleness (time since it last ran, in windows) + 1 when peers failed it
//             in the window; ties keep the configured order.
// A check with no known duration anywhere is planned at unknown_s (the budget's own deadline still
// holds: it errors, never passes, if it overruns).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ledger/ledger.hpp"

namespace preflight::ledger {

struct PlannerOptions {
    double budget_s = 20.0;
    double usable_fraction = 0.8;  // leave the rest for start-up, judging and writing
    double unknown_s = 1.0;        // expected time of a check never timed anywhere
    double window_s = 30.0 * 86400.0;
};

struct PlannedCheck {
    std::string check;
    bool run = true;
    bool must = false;
    double expected_s = 0.0;
    bool expected_known = false;
    double value = 0.0;
    std::string last_run_at;  // "" never
    std::string last_verdict;
    std::string why;  // why it runs or is left out
};

// In config order.
std::vector<PlannedCheck> plan_budget(const std::vector<std::string>& checks,
                                      const std::map<std::string, CheckHistory>& history,
                                      const PlannerOptions& options);

nlohmann::json planned_json(const std::vector<PlannedCheck>& plan, const PlannerOptions& options);

}  // namespace preflight::ledger
