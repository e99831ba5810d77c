// What one inter-node check's rounds take and give: the plan (check, params, deadlines and the
// judge's policy), the seams to run steps and name cohorts, and the outcome per node and group.
#pragma once

#include <chrono>
#include <functional>
#include <map>
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

    // No noise bound here: the rounds only pick nodes to re-pair, which is harmless when the
    // spread is wide; the judge stage applies evaluation.max_relative_mad before any verdict.
    core::JudgePolicy policy() const { return {threshold_fraction, min_cohort, floor, {}}; }
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

}  // namespace preflight::controller
