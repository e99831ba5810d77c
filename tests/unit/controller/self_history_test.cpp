// The self-history rule: a node within 90 % of today's cohort but more than drop_fraction under
// its own recent median is warned, with both references; too little history, a fail, an
// undecided result or a reference node are never judged by it.
#include <gtest/gtest.h>

#include "controller/run/self_history.hpp"

namespace {

using preflight::controller::add_self_history;
using preflight::core::Verdict;

preflight::outcome::NodeReport node(const std::string& name, double busbw,
                                    Verdict v = Verdict::pass) {
    preflight::outcome::NodeReport n;
    n.name = name;
    n.verdict = v;
    preflight::outcome::NodeCheck c;
    c.check = "collective.gloo_allreduce";
    c.verdict = v;
    c.metrics = {{"busbw_gbps", busbw}};
    c.judged_metric = "busbw_gbps";
    c.reference_basis = "cohort median";
    c.median = 100.0;
    n.checks.push_back(c);
    return n;
}

TEST(SelfHistory, WarnsASlowSlideTheCohortRuleCannotSeeWithBothReferences) {
    // 92 passes today's cohort (>= 90) but is 16 % under its own median 110 of 5 runs.
    std::vector<preflight::outcome::NodeReport> nodes = {node("n1", 92.0), node("n2", 101.0)};
    preflight::controller::OwnHistory h;
    h["n1"]["collective.gloo_allreduce"] = {112.0, 110.0, 109.0, 111.0, 108.0};
    h["n2"]["collective.gloo_allreduce"] = {103.0, 100.0, 99.0};
    preflight::core::SelfHistoryConfig cfg;
    EXPECT_EQ(add_self_history(nodes, h, cfg), 1);
    EXPECT_EQ(nodes[0].verdict, Verdict::warn);
    EXPECT_EQ(nodes[1].verdict, Verdict::pass);
    const auto& finding = nodes[0].checks.back();
    EXPECT_EQ(finding.check, "self_history");
    EXPECT_DOUBLE_EQ(finding.metrics.at("collective.gloo_allreduce.own_median"), 110.0);
    EXPECT_DOUBLE_EQ(finding.metrics.at("collective.gloo_allreduce.cohort_median"), 100.0);
    EXPECT_NEAR(finding.metrics.at("collective.gloo_allreduce.drop_fraction"), 1 - 92.0 / 110.0,
                1e-12);
    ASSERT_EQ(nodes[0].reasons.size(), 1u);
    EXPECT_NE(nodes[0].reasons[0].find("own median 110.0 of its last 5"), std::string::npos)
        << nodes[0].reasons[0];
    EXPECT_NE(nodes[0].reasons[0].find("cohort median today 100.0"), std::string::npos);
}

TEST(SelfHistory, NeverJudgesOnTooLittleHistoryAFailOrAReferenceNode) {
    std::vector<preflight::outcome::NodeReport> nodes = {
        node("few", 80.0), node("failed", 50.0, Verdict::fail), node("ref", 80.0)};
    nodes[2].reference = true;
    preflight::controller::OwnHistory h;
    h["few"]["collective.gloo_allreduce"] = {110.0, 110.0};  // 2 < min_samples 3
    h["failed"]["collective.gloo_allreduce"] = {110.0, 110.0, 110.0};
    h["ref"]["collective.gloo_allreduce"] = {110.0, 110.0, 110.0};
    EXPECT_EQ(add_self_history(nodes, h, {}), 0);
    EXPECT_EQ(nodes[0].verdict, Verdict::pass);
    EXPECT_EQ(nodes[1].checks.size(), 1u);
}

TEST(SelfHistory, AWithinLimitDropAndAZeroFractionAreQuiet) {
    std::vector<preflight::outcome::NodeReport> nodes = {node("n1", 100.0)};
    preflight::controller::OwnHistory h;
    h["n1"]["collective.gloo_allreduce"] = {105.0, 106.0, 104.0};  // 5.7 % under: < 10 %
    EXPECT_EQ(add_self_history(nodes, h, {}), 0);
    preflight::core::SelfHistoryConfig off;
    off.drop_fraction = 0.0;
    h["n1"]["collective.gloo_allreduce"] = {200.0, 200.0, 200.0};
    EXPECT_EQ(add_self_history(nodes, h, off), 0);
}

}  // namespace
