// The time-budget planner: what runs and what is left out for a budget, from the durations and
// values it is given (expected values worked out by hand in each test).
#include <gtest/gtest.h>

#include "ledger/budget_planner.hpp"
#include "ledger/ledger.hpp"

namespace {

using preflight::ledger::CheckHistory;
using preflight::ledger::plan_budget;
using preflight::ledger::PlannerOptions;

CheckHistory ran(double seconds, double hours_ago, const std::string& verdict = "pass",
                 int peer_failures = 0) {
    CheckHistory h;
    h.samples = 3;
    h.expected_seconds = seconds;
    h.last_run_at = preflight::ledger::utc_time_ago(hours_ago * 3600.0);
    h.last_verdict = verdict;
    h.node_failures = verdict == "pass" ? 0 : 1;
    h.peer_failures = peer_failures;
    return h;
}

std::vector<std::string> running(const std::vector<preflight::ledger::PlannedCheck>& plan) {
    std::vector<std::string> out;
    for (const auto& p : plan)
        if (p.run)
            out.push_back(p.check);
    return out;
}

TEST(BudgetPlanner, WithoutHistoryEverythingRunsAtTheUnknownEstimate) {
    PlannerOptions o;
    o.budget_s = 20.0;
    const auto plan = plan_budget({"a", "b", "c"}, {}, o);
    EXPECT_EQ(running(plan), (std::vector<std::string>{"a", "b", "c"}));  // 3 x 1 s <= 16 s
    for (const auto& p : plan)
        EXPECT_TRUE(p.must);
}

TEST(BudgetPlanner, AFiveSecondBudgetLeavesOutTheSlowCheckAndSaysWhenItLastRan) {
    PlannerOptions o;
    o.budget_s = 5.0;  // 4 s usable
    const std::map<std::string, CheckHistory> h = {
        {"link.netdev", ran(0.1, 1)}, {"link.pause", ran(12.0, 2)}, {"link.peermem", ran(0.2, 30)}};
    const auto plan = plan_budget({"link.netdev", "link.pause", "link.peermem"}, h, o);
    EXPECT_EQ(running(plan), (std::vector<std::string>{"link.netdev", "link.peermem"}));
    ASSERT_FALSE(plan[1].run);
    EXPECT_EQ(plan[1].last_run_at, h.at("link.pause").last_run_at);
    EXPECT_NE(plan[1].why.find("expected 12.0 s"), std::string::npos) << plan[1].why;
    const auto j = preflight::ledger::planned_json(plan, o);
    ASSERT_EQ(j["skipped_for_budget"].size(), 1u);
    EXPECT_EQ(j["skipped_for_budget"][0]["check"], "link.pause");
}

TEST(BudgetPlanner, AFailureHereComesFirstAndTheStalestFillsWhatIsLeft) {
    PlannerOptions o;
    o.budget_s = 10.0;  // 8 s usable
    const std::map<std::string, CheckHistory> h = {
        {"fresh", ran(3.0, 1)},            // value 1 h / 30 d
        {"stale", ran(3.0, 24 * 20)},      // value 20 d / 30 d
        {"broken", ran(4.0, 1, "fail")},   // must run
        {"peers", ran(3.0, 2, "pass", 2)}  // value ~1 (peers failed it)
    };
    // broken (4) + peers (3) = 7 <= 8; stale would make 10, fresh 10: both left out.
    const auto plan = plan_budget({"fresh", "stale", "broken", "peers"}, h, o);
    EXPECT_EQ(running(plan), (std::vector<std::string>{"broken", "peers"}));
}

// Staleness decides when nothing must run: three 3 s checks, two fit in 8 s. The two that ran
// longest ago run; the one that ran an hour ago is left out (an inverted age term would run it).
TEST(BudgetPlanner, WhenOnlyTwoOfThreeFitTheStalestTwoRun) {
    PlannerOptions o;
    o.budget_s = 10.0;  // 8 s usable
    const std::map<std::string, CheckHistory> h = {
        {"fresh", ran(3.0, 1)},         // value 1 h / 30 d
        {"mid", ran(3.0, 24 * 5)},      // value 5 d / 30 d
        {"stale", ran(3.0, 24 * 20)}};  // value 20 d / 30 d
    const auto plan = plan_budget({"fresh", "mid", "stale"}, h, o);
    EXPECT_EQ(running(plan), (std::vector<std::string>{"mid", "stale"}));
    EXPECT_FALSE(plan[0].must);
    EXPECT_GT(plan[2].value, plan[1].value);
    EXPECT_GT(plan[1].value, plan[0].value);
    EXPECT_NE(plan[0].why.find("left out for the budget: expected 3.0 s, 2.0 s of 8.0 s usable"),
              std::string::npos)
        << plan[0].why;
    // With room for one, only the stalest.
    o.budget_s = 5.0;  // 4 s usable
    EXPECT_EQ(running(plan_budget({"fresh", "mid", "stale"}, h, o)),
              std::vector<std::string>{"stale"});
}

TEST(BudgetPlanner, AMustRunCheckThatCannotFitIsLeftOutNotStartedToOverrun) {
    PlannerOptions o;
    o.budget_s = 5.0;
    const auto plan = plan_budget({"nccl"}, {{"nccl", ran(30.0, 1, "error")}}, o);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_FALSE(plan[0].run);
    EXPECT_TRUE(plan[0].must);
}

TEST(BudgetPlanner, ForAFleetItSaysOnHowManyNodesACheckWasNeverMeasured) {
    PlannerOptions o;
    o.budget_s = 10.0;  // 8 s usable
    CheckHistory some = ran(3.0, 5);
    some.nodes = 512;
    some.nodes_unmeasured = 3;
    some.last_run_at = "";  // as fleet_check_history gives it when a node never ran the check
    CheckHistory all = ran(3.0, 5);
    all.nodes = 512;
    CheckHistory slow = ran(30.0, 50);
    slow.nodes = 512;
    const auto plan = plan_budget({"a", "b", "c"}, {{"a", some}, {"b", all}, {"c", slow}}, o);
    EXPECT_EQ(running(plan), (std::vector<std::string>{"a", "b"}));  // 3 + 3 <= 8; 30 never fits
    EXPECT_TRUE(plan[0].must);
    EXPECT_EQ(plan[0].why, "never measured on 3 of 512 node(s)");
    EXPECT_NE(plan[1].why.find("(on its least recent node)"), std::string::npos) << plan[1].why;
    EXPECT_NE(plan[2].why.find("left out for the budget: expected 30.0 s"), std::string::npos)
        << plan[2].why;
}

}  // namespace
