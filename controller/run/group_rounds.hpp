// Runs one inter-node check (a collective) through the planner's rounds on connected agents and
// turns the group measurements into one result per node: the node's figure is the best group it was
// in (a group is only as fast as its slowest member), so a node that was merely paired with a slow
// one is cleared by its re-pairing, and a node that is slow with every partner keeps a low figure.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/net/agent_hub.hpp"
#include "core/check_spec.hpp"
#include "core/judge.hpp"
#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

struct GroupCheckPlan {
    std::string check;
    nlohmann::json params;      // as configured (the agent fills defaults)
    double step_deadline_s;     // what the agent gets
    double controller_slack_s;  // extra the controller waits before calling a step lost
    double threshold_fraction = 0.90;
    int min_cohort = 3;                // as evaluation.min_cohort: the judge's policy
    std::string cohort_label = "sku";  // named in the judge's details
    std::string metric = std::string(core::k_busbw_metric);
    // Absolute floor for the metric (evaluation.floors). When a cohort's median is under it, most
    // of the cohort is slow and the median cannot be the reference: nodes are judged against the
    // floor instead, and the outcome says so.
    std::optional<double> floor;
    // Optional: a node's leaf switch or rack; round 1 pairs nodes under the same one first.
    std::function<std::string(const std::string&)> topology_of;

    core::JudgePolicy policy() const { return {threshold_fraction, min_cohort, floor}; }
};

struct GroupCheckOutcome {
    std::map<std::string, core::CheckResult> per_node;
    std::vector<outcome::GroupRecord> groups;
    std::vector<outcome::RoundSummary> rounds;
    // Why the reference was not the plain cohort median (floor fallback, or a warning that the
    // median looks slow); also appended to the affected nodes' details.
    std::vector<std::string> notes;
};

using CohortOf = std::function<std::string(const std::string&)>;
// Runs one batch of steps and returns one outcome per request, in order (AgentHub::run_steps in
// production; a simulated fabric in unit tests).
using StepRunner = std::function<std::vector<StepOutcome>(
    const std::vector<StepRequest>&, std::chrono::steady_clock::time_point,
    const std::function<void(std::size_t, std::size_t)>&)>;
using ProgressFn =
    std::function<void(const std::string& what, std::size_t done, std::size_t total)>;

class RoundsState;

// Rounds 1 and 2 of one check: disjoint pairs, then each node the judge fails re-paired with a
// node that passed, in waves, re-judging after each. Carries its state to confirm_suspects.
struct SuspectSearch {
    std::vector<std::string> nodes;
    std::shared_ptr<RoundsState> state;
    core::CohortJudgement judged;      // the judge over the figures after the last round
    std::set<std::string> tried;       // re-paired once with a good partner
    std::set<std::string> still_slow;  // ... and slow there too
};
SuspectSearch locate_suspects(const StepRunner& run_steps, const GroupCheckPlan& plan,
                              const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                              const ProgressFn& progress);

// Round 3: each suspect still failing, once more with another good partner. A node the final
// judgement fails that was not confirmed here is an `error` (unconfirmed suspect), never a fail.
GroupCheckOutcome confirm_suspects(SuspectSearch search, const CohortOf& cohort_of);

// Both, for one check.
GroupCheckOutcome run_group_check(const StepRunner& run_steps, const GroupCheckPlan& plan,
                                  const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                                  const ProgressFn& progress);

}  // namespace preflight::controller
