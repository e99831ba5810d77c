// Stage budget (`preflight run --budget-s S`): which checks fit S seconds, from the ledger's
// history of these nodes (ledger/budget_planner.hpp), and the deadline that holds the run to S.
//
// A run's time per check is not a node's: node-local checks run on every node at once, so a
// batch takes as long as its slowest nodes (the ledger gives the 90th percentile of recent
// times); a check read before and after the collectives runs twice; a collective check may take
// three rounds (pairs, re-pairs, confirmation), so it is expected at three times its step.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/run/stages.hpp"
#include "ledger/budget_planner.hpp"

namespace preflight::controller {

namespace {

constexpr int k_group_rounds = 3;

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

void keep_only(std::vector<std::string>& checks, const std::vector<std::string>& planned) {
    checks.erase(std::remove_if(checks.begin(), checks.end(),
                                [&](const std::string& c) { return !contains(planned, c); }),
                 checks.end());
}

// How many times the run pays a check's step time.
int passes(const RunPlan& plan, const std::string& check) {
    if (contains(plan.group_checks, check))
        return k_group_rounds;
    return contains(plan.around_collectives, check) ? 2 : 1;
}

}  // namespace

bool RunContext::budget_passed() {
    if (budget_deadline && std::chrono::steady_clock::now() >= *budget_deadline)
        budget_spent = true;
    return budget_spent.load();
}

std::string RunContext::interrupted_because() const {
    if (budget_spent.load())
        return fmt::format("the run's time budget (--budget-s {:g}) was used up", options.budget_s);
    return "interrupted";
}

void plan_within_budget(RunContext& run) {
    const double budget_s = run.options.budget_s;
    if (budget_s <= 0.0)
        return;
    run.budget_deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(budget_s));
    ledger::PlannerOptions po;
    po.budget_s = budget_s;
    std::vector<std::string> nodes;
    for (const auto& n : run.options.nodes)
        if (!n.reference)
            nodes.push_back(n.name);
    std::map<std::string, ledger::CheckHistory> history;
    std::string unknown_why;
    if (open_run_ledger(run)) {
        try {
            history = run.ledger->fleet_check_history(nodes, run.checks,
                                                      ledger::utc_time_ago(po.window_s));
        } catch (const ledger::DbError& e) {
            unknown_why = e.what();
        }
    } else {
        const auto& info = run.report.ledger;
        unknown_why =
            info.is_object() ? info.value("error", std::string("no ledger")) : "no ledger";
    }
    if (!unknown_why.empty()) {
        // Nothing is known: every check counts as never measured. The deadline still holds.
        spdlog::error("budget: the ledger's history is not available ({}); planning without it",
                      unknown_why);
    }
    for (auto& [check, h] : history)
        if (h.expected_seconds)
            *h.expected_seconds *= passes(run.plan, check);
    const auto planned = ledger::plan_budget(run.checks, history, po);
    std::vector<std::string> kept;
    for (const auto& p : planned) {
        if (p.run) {
            kept.push_back(p.check);
        } else {
            spdlog::warn("budget: {} left out: {}", p.check, p.why);
        }
    }
    run.checks = kept;
    keep_only(run.plan.node_checks, kept);
    keep_only(run.plan.group_checks, kept);
    keep_only(run.plan.around_collectives, kept);
    if (run.plan.group_checks.empty())
        run.plan.around_collectives.clear();  // nothing to read them around: they run once
    auto summary = ledger::planned_json(planned, po);
    summary["used_up"] = false;
    if (!unknown_why.empty())
        summary["history_error"] = unknown_why;
    run.report.ledger["budget"] = std::move(summary);
    spdlog::info("budget {:g} s: running {} of {} checks", budget_s, kept.size(), planned.size());
}

}  // namespace preflight::controller
