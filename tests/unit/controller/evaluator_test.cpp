#include "controller/run/evaluator.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::controller {
namespace {

using core::Verdict;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* k_gloo = "collective.gloo_allreduce";
constexpr const char* k_netdev = "link.netdev";

core::CheckResult collective(double busbw, Verdict verdict = Verdict::pass) {
    core::CheckResult r;
    r.check = k_gloo;
    r.verdict = verdict;
    r.metrics["busbw_gbps"] = busbw;
    r.metrics["algbw_gbps"] = busbw / 2;
    return r;
}

core::CheckResult result(const std::string& check, Verdict verdict, const std::string& detail) {
    core::CheckResult r;
    r.check = check;
    r.verdict = verdict;
    r.detail = detail;
    return r;
}

NodeInput node(const std::string& name, const std::string& sku) {
    NodeInput in;
    in.node.name = name;
    if (!sku.empty()) {
        in.node.labels["sku"] = sku;
    }
    return in;
}

// One collective result per node, all in one cohort.
std::vector<NodeInput> cohort(const std::vector<double>& values, const std::string& sku = "a100",
                              const std::string& prefix = "n") {
    std::vector<NodeInput> inputs;
    for (std::size_t i = 0; i < values.size(); ++i) {
        auto in = node(prefix + std::to_string(i + 1), sku);
        in.results[k_gloo] = collective(values[i]);
        inputs.push_back(std::move(in));
    }
    return inputs;
}

const outcome::NodeCheck& check_of(const outcome::NodeReport& report, const std::string& check) {
    for (const auto& c : report.checks) {
        if (c.check == check) {
            return c;
        }
    }
    ADD_FAILURE() << report.name << " has no check " << check;
    static outcome::NodeCheck none;
    return none;
}

std::vector<Verdict> verdicts(const std::vector<outcome::NodeReport>& reports) {
    std::vector<Verdict> out;
    for (const auto& r : reports) {
        out.push_back(r.verdict);
    }
    return out;
}

TEST(Evaluator, JudgedMetric) {
    EXPECT_EQ(judged_metric("collective.gloo_allreduce"), "busbw_gbps");
    EXPECT_EQ(judged_metric("collective.nccl_allreduce"), "busbw_gbps");
    EXPECT_FALSE(judged_metric("link.netdev").has_value());
    EXPECT_FALSE(judged_metric("gpu.inventory").has_value());
}

TEST(Evaluator, ExactlyTheSlowNodeFails) {
    core::EvaluationConfig config;
    auto reports = evaluate(cohort({100, 101, 99, 100, 60}), {k_gloo}, config);
    ASSERT_EQ(reports.size(), 5u);
    EXPECT_THAT(verdicts(reports), ElementsAre(Verdict::pass, Verdict::pass, Verdict::pass,
                                               Verdict::pass, Verdict::fail));
    const auto& slow = check_of(reports[4], k_gloo);
    EXPECT_EQ(slow.verdict, Verdict::fail);
    ASSERT_TRUE(slow.median.has_value());
    EXPECT_DOUBLE_EQ(*slow.median, 100.0);
    ASSERT_TRUE(slow.threshold.has_value());
    EXPECT_DOUBLE_EQ(*slow.threshold, 90.0);
    ASSERT_TRUE(slow.fraction_of_median.has_value());
    EXPECT_DOUBLE_EQ(*slow.fraction_of_median, 0.6);
    ASSERT_TRUE(slow.mad.has_value());
    EXPECT_DOUBLE_EQ(*slow.mad, 1.0);
    EXPECT_FALSE(slow.floor.has_value());
    EXPECT_THAT(slow.detail, HasSubstr("60% of the sku=a100 median"));
    EXPECT_THAT(slow.detail, HasSubstr("threshold 90%"));
    ASSERT_EQ(reports[4].reasons.size(), 1u);
    EXPECT_THAT(reports[4].reasons[0], StartsWith("fail: collective.gloo_allreduce: "));
    EXPECT_TRUE(reports[0].reasons.empty());
    // Metrics are carried through.
    EXPECT_DOUBLE_EQ(slow.metrics.at("algbw_gbps"), 30.0);
}

TEST(Evaluator, ThresholdEdge) {
    core::EvaluationConfig config;  // threshold_fraction 0.90
    // Median 100: 91 passes, exactly 90 is not under the threshold, 89.9 fails.
    auto reports = evaluate(cohort({100, 100, 100, 100, 91, 90, 89.9}), {k_gloo}, config);
    EXPECT_EQ(reports[4].verdict, Verdict::pass);
    EXPECT_DOUBLE_EQ(*check_of(reports[4], k_gloo).fraction_of_median, 0.91);
    EXPECT_EQ(reports[5].verdict, Verdict::pass);
    EXPECT_EQ(reports[6].verdict, Verdict::fail);
}

TEST(Evaluator, ConfiguredThresholdFraction) {
    core::EvaluationConfig config;
    config.threshold_fraction = 0.5;
    auto reports = evaluate(cohort({100, 100, 100, 60, 40}), {k_gloo}, config);
    EXPECT_THAT(verdicts(reports), ElementsAre(Verdict::pass, Verdict::pass, Verdict::pass,
                                               Verdict::pass, Verdict::fail));
}

TEST(Evaluator, FloorsFailRegardlessOfCohort) {
    core::EvaluationConfig config;
    config.floors[k_gloo]["busbw_gbps"] = 50.0;
    // The whole cohort is uniformly slow: no node is under 0.9 x median, all under the floor.
    auto reports = evaluate(cohort({40, 41, 40, 42}), {k_gloo}, config);
    for (const auto& r : reports) {
        EXPECT_EQ(r.verdict, Verdict::fail) << r.name;
        const auto& c = check_of(r, k_gloo);
        EXPECT_THAT(c.detail, HasSubstr("under the floor 50"));
        ASSERT_TRUE(c.floor.has_value());
        EXPECT_DOUBLE_EQ(*c.floor, 50.0);
    }
    // A single node (no cohort to speak of) is judged by the floor too.
    auto single = evaluate(cohort({49}), {k_gloo}, config);
    EXPECT_EQ(single[0].verdict, Verdict::fail);
    auto single_ok = evaluate(cohort({51}), {k_gloo}, config);
    EXPECT_EQ(single_ok[0].verdict, Verdict::pass);
}

TEST(Evaluator, FloorForAnotherCheckDoesNotApply) {
    core::EvaluationConfig config;
    config.floors["collective.nccl_allreduce"]["busbw_gbps"] = 500.0;
    config.floors[k_gloo]["algbw_gbps"] = 500.0;
    auto reports = evaluate(cohort({40, 41, 40, 42}), {k_gloo}, config);
    for (const auto& r : reports) {
        EXPECT_EQ(r.verdict, Verdict::pass) << r.name;
        EXPECT_FALSE(check_of(r, k_gloo).floor.has_value());
    }
}

TEST(Evaluator, SmallCohortWithoutFloorIsNotJudged) {
    core::EvaluationConfig config;  // min_cohort 3
    auto reports = evaluate(cohort({100, 10}), {k_gloo}, config);
    for (const auto& r : reports) {
        EXPECT_EQ(r.verdict, Verdict::warn) << r.name;
        const auto& c = check_of(r, k_gloo);
        EXPECT_THAT(c.detail, HasSubstr("not judged"));
        EXPECT_THAT(c.detail, HasSubstr("min_cohort 3"));
        EXPECT_FALSE(c.median.has_value());
        EXPECT_FALSE(c.threshold.has_value());
        ASSERT_EQ(r.reasons.size(), 1u);
        EXPECT_THAT(r.reasons[0], StartsWith("warn: "));
    }
}

TEST(Evaluator, SmallCohortIsInconclusiveNotAPass) {
    auto reports = evaluate(cohort({100, 10}), {k_gloo}, core::EvaluationConfig{});
    for (const auto& r : reports) {
        EXPECT_EQ(check_of(r, k_gloo).undecided, core::Undecided::inconclusive) << r.name;
    }
}

TEST(Evaluator, ANoisyCohortGivesInconclusiveNotFail) {
    // Medians by hand: sorted {50, 55, 60, 100, 100, 100} -> 80, MAD 20 (25% of the median),
    // above the default bound of 10%: the three slow nodes are inconclusive, none fails.
    core::EvaluationConfig config;
    ASSERT_DOUBLE_EQ(config.max_relative_mad, 0.10);
    auto reports = evaluate(cohort({100, 100, 60, 55, 100, 50}), {k_gloo}, config);
    for (int i : {2, 3, 5}) {
        EXPECT_EQ(reports[i].verdict, Verdict::warn) << reports[i].name;
        EXPECT_EQ(check_of(reports[i], k_gloo).undecided, core::Undecided::inconclusive);
        EXPECT_THAT(reports[i].reasons[0], HasSubstr("too noisy to judge"));
    }
    // With the bound off (0) the same figures fail.
    config.max_relative_mad = 0.0;
    auto strict = evaluate(cohort({100, 100, 60, 55, 100, 50}), {k_gloo}, config);
    EXPECT_EQ(strict[2].verdict, Verdict::fail);
}

TEST(Evaluator, AnIncompleteResultFromTheRoundsStaysUndecided) {
    auto inputs = cohort({100});
    inputs[0].results[k_gloo].verdict = Verdict::warn;
    inputs[0].results[k_gloo].undecided = core::Undecided::incomplete;
    inputs[0].results[k_gloo].metrics.clear();
    inputs[0].node.reference = false;
    auto reports = evaluate(inputs, {k_gloo}, core::EvaluationConfig{});
    EXPECT_EQ(reports[0].verdict, Verdict::warn);
    EXPECT_EQ(check_of(reports[0], k_gloo).undecided, core::Undecided::incomplete);
}

TEST(Evaluator, ReferenceNodesAreMarked) {
    auto inputs = cohort({100, 100, 100});
    inputs[1].node.reference = true;
    auto reports = evaluate(inputs, {k_gloo}, core::EvaluationConfig{});
    EXPECT_FALSE(reports[0].reference);
    EXPECT_TRUE(reports[1].reference);
}

TEST(Evaluator, SmallCohortWithFloorIsJudgedByTheFloorOnly) {
    core::EvaluationConfig config;
    config.floors[k_gloo]["busbw_gbps"] = 20.0;
    auto reports = evaluate(cohort({100, 10}), {k_gloo}, config);
    EXPECT_EQ(reports[0].verdict, Verdict::pass);
    EXPECT_EQ(reports[1].verdict, Verdict::fail);
    EXPECT_THAT(check_of(reports[1], k_gloo).detail, HasSubstr("floor"));
    // 30 is well under 0.9 x the "median" 65, but the cohort is too small for that to count.
    auto above = evaluate(cohort({100, 30}), {k_gloo}, config);
    EXPECT_EQ(above[1].verdict, Verdict::pass);
    EXPECT_FALSE(check_of(above[1], k_gloo).median.has_value());
}

TEST(Evaluator, MinCohortCountsMeasuredNodesOnly) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100});
    auto broken = node("n3", "a100");
    broken.results[k_gloo] = result(k_gloo, Verdict::error, "timeout");
    inputs.push_back(broken);
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[0].verdict, Verdict::warn);
    EXPECT_EQ(reports[1].verdict, Verdict::warn);
    EXPECT_EQ(reports[2].verdict, Verdict::error);
}

TEST(Evaluator, CohortsByLabelAreJudgedSeparately) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100}, "h100", "h");
    auto slow_sku = cohort({50, 50, 51, 40}, "a100", "a");
    inputs.insert(inputs.end(), slow_sku.begin(), slow_sku.end());
    auto reports = evaluate(inputs, {k_gloo}, config);
    // Against one global median (100 / 50 mixed) every a100 would fail; per cohort only a4 does.
    EXPECT_THAT(verdicts(reports),
                ElementsAre(Verdict::pass, Verdict::pass, Verdict::pass, Verdict::pass,
                            Verdict::pass, Verdict::pass, Verdict::fail));
    EXPECT_DOUBLE_EQ(*check_of(reports[0], k_gloo).median, 100.0);
    EXPECT_DOUBLE_EQ(*check_of(reports[3], k_gloo).median, 50.0);
    EXPECT_THAT(check_of(reports[6], k_gloo).detail, HasSubstr("sku=a100"));
}

TEST(Evaluator, CohortLabelIsConfigurable) {
    core::EvaluationConfig config;
    config.cohort_label = "rack";
    auto inputs = cohort({100, 100, 100, 50, 50, 50});
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        inputs[i].node.labels["rack"] = i < 3 ? "r1" : "r2";
    }
    auto reports = evaluate(inputs, {k_gloo}, config);
    for (const auto& r : reports) {
        EXPECT_EQ(r.verdict, Verdict::pass) << r.name;
    }
}

TEST(Evaluator, NodesWithoutTheLabelFormTheirOwnCohort) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100}, "", "x");
    auto labelled = cohort({10, 10, 10}, "a100", "a");
    inputs.insert(inputs.end(), labelled.begin(), labelled.end());
    auto reports = evaluate(inputs, {k_gloo}, config);
    for (const auto& r : reports) {
        EXPECT_EQ(r.verdict, Verdict::pass) << r.name;
    }
    auto slow = cohort({100, 100, 100, 10}, "", "x");
    auto slow_reports = evaluate(slow, {k_gloo}, config);
    EXPECT_EQ(slow_reports[3].verdict, Verdict::fail);
    EXPECT_THAT(check_of(slow_reports[3], k_gloo).detail, HasSubstr("(no sku label)"));
}

TEST(Evaluator, UnreachableIsErrorWithReason) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    auto gone = node("n4", "a100");
    gone.unreachable = "did not connect within 30 s";
    inputs.push_back(gone);
    auto reports = evaluate(inputs, {k_netdev, k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::error);
    ASSERT_EQ(reports[3].reasons.size(), 1u);
    EXPECT_EQ(reports[3].reasons[0], "unreachable: did not connect within 30 s");
    ASSERT_EQ(reports[3].checks.size(), 2u);
    for (const auto& c : reports[3].checks) {
        EXPECT_EQ(c.verdict, Verdict::error);
        EXPECT_THAT(c.detail, HasSubstr("unreachable"));
    }
}

TEST(Evaluator, UnreachableWinsOverStaleResults) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100, 100});
    inputs[3].unreachable = "lost";
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::error);
    EXPECT_EQ(check_of(reports[3], k_gloo).verdict, Verdict::error);
}

TEST(Evaluator, MissingResultIsError) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    inputs.push_back(node("n4", "a100"));
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::error);
    EXPECT_EQ(check_of(reports[3], k_gloo).detail, "no result");
    ASSERT_EQ(reports[3].reasons.size(), 1u);
    EXPECT_EQ(reports[3].reasons[0], "error: collective.gloo_allreduce: no result");
    // A node-local check the node never reported is missing too.
    auto local = evaluate(cohort({100, 100, 100}), {k_netdev, k_gloo}, config);
    EXPECT_EQ(local[0].verdict, Verdict::error);
    EXPECT_EQ(check_of(local[0], k_netdev).verdict, Verdict::error);
}

TEST(Evaluator, PassWithoutTheJudgedMetricIsError) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    auto empty = node("n4", "a100");
    empty.results[k_gloo] = result(k_gloo, Verdict::pass, "all good, trust me");
    inputs.push_back(empty);
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::error);
    EXPECT_THAT(check_of(reports[3], k_gloo).detail, HasSubstr("no busbw_gbps"));
    // The other nodes are still judged, on their own three values.
    EXPECT_EQ(reports[0].verdict, Verdict::pass);
    EXPECT_DOUBLE_EQ(*check_of(reports[0], k_gloo).median, 100.0);
}

TEST(Evaluator, NonPassResultsKeepTheirVerdict) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    auto failed = node("n4", "a100");
    failed.results[k_gloo] = result(k_gloo, Verdict::fail, "data check mismatch");
    auto errored = node("n5", "a100");
    errored.results[k_gloo] = result(k_gloo, Verdict::error, "peer vanished");
    auto skipped = node("n6", "a100");
    skipped.results[k_gloo] = result(k_gloo, Verdict::skip, "no peers");
    inputs.push_back(failed);
    inputs.push_back(errored);
    inputs.push_back(skipped);
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::fail);
    EXPECT_EQ(check_of(reports[3], k_gloo).detail, "data check mismatch");
    EXPECT_EQ(reports[4].verdict, Verdict::error);
    EXPECT_EQ(reports[5].verdict, Verdict::skip);
}

TEST(Evaluator, WarnWithTheMetricIsMeasuredAndJudged) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    auto warned = node("n4", "a100");
    warned.results[k_gloo] = collective(50, Verdict::warn);
    inputs.push_back(warned);
    auto reports = evaluate(inputs, {k_gloo}, config);
    EXPECT_EQ(reports[3].verdict, Verdict::fail);
}

TEST(Evaluator, NodeVerdictIsTheWorstOverChecksIgnoringSkip) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100, 100});
    inputs[0].results[k_netdev] = result(k_netdev, Verdict::skip, "no hardware interfaces");
    inputs[1].results[k_netdev] = result(k_netdev, Verdict::warn, "carrier changes");
    inputs[2].results[k_netdev] = result(k_netdev, Verdict::fail, "eth0 down");
    inputs[3].results[k_netdev] = result(k_netdev, Verdict::pass, "");
    auto reports = evaluate(inputs, {k_netdev, k_gloo}, config);
    EXPECT_THAT(verdicts(reports),
                ElementsAre(Verdict::pass, Verdict::warn, Verdict::fail, Verdict::pass));

    // Only skips: the node is skip.
    NodeInput all_skip = node("s", "a100");
    all_skip.results[k_netdev] = result(k_netdev, Verdict::skip, "absent");
    auto skip_report = evaluate({all_skip}, {k_netdev}, config);
    EXPECT_EQ(skip_report[0].verdict, Verdict::skip);
    ASSERT_EQ(skip_report[0].reasons.size(), 1u);
    EXPECT_EQ(skip_report[0].reasons[0], "skip: link.netdev: absent");

    // fail outranks error, error outranks warn.
    NodeInput mixed = node("m", "a100");
    mixed.results[k_netdev] = result(k_netdev, Verdict::error, "timeout");
    mixed.results["link.pcie"] = result("link.pcie", Verdict::warn, "x8");
    mixed.results["link.infiniband"] = result("link.infiniband", Verdict::fail, "port down");
    auto mixed_report = evaluate({mixed}, {k_netdev, "link.pcie"}, config);
    EXPECT_EQ(mixed_report[0].verdict, Verdict::error);
    auto mixed_all = evaluate({mixed}, {k_netdev, "link.pcie", "link.infiniband"}, config);
    EXPECT_EQ(mixed_all[0].verdict, Verdict::fail);
}

TEST(Evaluator, ReasonsOrderedBySeverity) {
    core::EvaluationConfig config;
    NodeInput in = node("n", "a100");
    in.results["link.pcie"] = result("link.pcie", Verdict::warn, "x8 of x16");
    in.results["link.peermem"] = result("link.peermem", Verdict::skip, "no GPU");
    in.results[k_netdev] = result(k_netdev, Verdict::error, "timed out");
    in.results["link.infiniband"] = result("link.infiniband", Verdict::fail, "mlx5_0 down");
    in.results["link.roce"] = result("link.roce", Verdict::pass, "");
    in.results["link.pause"] = result("link.pause", Verdict::fail, "pause storm");
    auto reports = evaluate(
        {in}, {"link.pcie", "link.peermem", k_netdev, "link.infiniband", "link.roce", "link.pause"},
        config);
    EXPECT_EQ(reports[0].verdict, Verdict::fail);
    EXPECT_THAT(reports[0].reasons,
                ElementsAre("fail: link.infiniband: mlx5_0 down", "fail: link.pause: pause storm",
                            "error: link.netdev: timed out", "warn: link.pcie: x8 of x16",
                            "skip: link.peermem: no GPU"));
}

TEST(Evaluator, NoChecksIsError) {
    core::EvaluationConfig config;
    auto reports = evaluate({node("n", "a100")}, {}, config);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].verdict, Verdict::error);
    EXPECT_THAT(reports[0].reasons, ElementsAre("no checks ran"));
}

TEST(Evaluator, ReportsKeepNamesLabelsAndCheckOrder) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 100, 100});
    inputs[0].node.labels["rack"] = "r7";
    auto reports = evaluate(inputs, {k_netdev, k_gloo}, config);
    EXPECT_EQ(reports[0].name, "n1");
    EXPECT_EQ(reports[0].labels.at("rack"), "r7");
    ASSERT_EQ(reports[0].checks.size(), 2u);
    EXPECT_EQ(reports[0].checks[0].check, k_netdev);
    EXPECT_EQ(reports[0].checks[1].check, k_gloo);
}

TEST(Evaluator, EmptyInput) {
    core::EvaluationConfig config;
    EXPECT_TRUE(evaluate({}, {k_gloo}, config).empty());
}

TEST(Evaluator, SlowNodeShowsItsLinkFindingsAsLikelyCause) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 101, 99, 100, 47});
    inputs[4].results["link.infiniband"] =
        result("link.infiniband", Verdict::fail, "mlx5_3 port 1 at 100 Gb/s, expected 400");
    inputs[4].results["link.pcie"] =
        result("link.pcie", Verdict::warn, "0000:9d:00.0 (GPU): speed 2.5 GT/s, expected 32");
    inputs[4].results["link.roce"] = result("link.roce", Verdict::pass, "DCQCN on");
    inputs[4].results["link.peermem"] = result("link.peermem", Verdict::skip, "no driver");
    // Node 2 has a link finding but a good figure: nothing to explain.
    inputs[1].results["link.infiniband"] =
        result("link.infiniband", Verdict::fail, "mlx5_0 port 1 at 200 Gb/s, expected 400");
    const std::vector<std::string> checks = {"link.infiniband", "link.pcie", "link.roce",
                                             "link.peermem", k_gloo};
    for (auto& in : inputs) {
        for (const auto& c : checks) {
            if (!in.results.count(c)) {
                in.results[c] = result(c, Verdict::pass, "");
            }
        }
    }
    auto reports = evaluate(inputs, checks, config);
    const auto& slow = check_of(reports[4], k_gloo);
    EXPECT_EQ(slow.verdict, Verdict::fail);
    EXPECT_EQ(slow.detail,
              "busbw_gbps 47 is 47% of the sku=a100 median 100 (threshold 90%); likely cause: "
              "link.infiniband: mlx5_3 port 1 at 100 Gb/s, expected 400; link.pcie: 0000:9d:00.0 "
              "(GPU): speed 2.5 GT/s, expected 32");
    EXPECT_THAT(reports[4].reasons, ::testing::Contains(StartsWith(
                                        "fail: collective.gloo_allreduce: busbw_gbps 47 is 47% of "
                                        "the sku=a100 median 100 (threshold 90%); likely cause: "
                                        "link.infiniband: mlx5_3 port 1 at 100 Gb/s")));
    // The link checks keep their own entries unchanged.
    EXPECT_EQ(check_of(reports[4], "link.infiniband").detail,
              "mlx5_3 port 1 at 100 Gb/s, expected 400");
    EXPECT_EQ(check_of(reports[1], k_gloo).verdict, Verdict::pass);
    EXPECT_THAT(check_of(reports[1], k_gloo).detail, ::testing::Not(HasSubstr("likely cause")));
}

TEST(Evaluator, SlowNodeWithCleanLinksGetsNoHint) {
    core::EvaluationConfig config;
    auto inputs = cohort({100, 101, 99, 100, 47});
    for (auto& in : inputs) {
        in.results["link.infiniband"] = result("link.infiniband", Verdict::pass, "8 active");
    }
    auto reports = evaluate(inputs, {"link.infiniband", k_gloo}, config);
    EXPECT_EQ(check_of(reports[4], k_gloo).verdict, Verdict::fail);
    EXPECT_THAT(check_of(reports[4], k_gloo).detail, ::testing::Not(HasSubstr("likely cause")));
}

}  // namespace
}  // namespace preflight::controller
