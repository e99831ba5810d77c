// The judge on hand-computed cohorts: medians, thresholds and floors written out by hand.
#include "core/judge.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::HasSubstr;

std::vector<Sample> cohort(const std::vector<double>& values, const std::string& sku = "a100") {
    std::vector<Sample> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        out.push_back({"n" + std::to_string(i), sku, values[i]});
    }
    return out;
}

TEST(Judge, UnderNinetyPercentOfTheNodeMedianFails) {
    // Median of {100, 100, 95, 80, 100} is 100; threshold 90.
    auto j = judge_cohorts("busbw_gbps", cohort({100, 100, 95, 80, 100}), {}, "sku");
    ASSERT_EQ(j.nodes.size(), 5u);
    EXPECT_EQ(j.nodes[2].verdict, Verdict::pass);
    EXPECT_EQ(j.nodes[3].verdict, Verdict::fail);
    EXPECT_THAT(j.nodes[3].detail, HasSubstr("80% of the sku=a100 median 100 (threshold 90%)"));
    const auto& ref = j.nodes[3].reference;
    EXPECT_EQ(ref.basis, "cohort median");
    EXPECT_EQ(ref.metric, "busbw_gbps");
    EXPECT_EQ(ref.cohort, "sku=a100");
    EXPECT_EQ(ref.cohort_size, 5);
    EXPECT_DOUBLE_EQ(*ref.median, 100.0);
    EXPECT_DOUBLE_EQ(*ref.threshold, 90.0);
    EXPECT_DOUBLE_EQ(*ref.mad, 0.0);  // deviations {0,0,5,20,0}: median 0
    EXPECT_DOUBLE_EQ(*j.nodes[3].fraction_of_median, 0.8);
}

TEST(Judge, ExactlyAtTheThresholdPasses) {
    // 0.5 x 64 = 32 exactly in binary floating point.
    JudgePolicy policy{0.5, 3, std::nullopt};
    auto j = judge_cohorts("m", cohort({64, 64, 64, 32, 31.999}), policy, "sku");
    EXPECT_EQ(j.nodes[3].verdict, Verdict::pass);
    EXPECT_EQ(j.nodes[4].verdict, Verdict::fail);
}

TEST(Judge, EachCohortIsItsOwnReference) {
    auto samples = cohort({50, 50, 50}, "a");
    auto b = cohort({100, 100, 50}, "b");
    samples.insert(samples.end(), b.begin(), b.end());
    auto j = judge_cohorts("m", samples, {}, "sku");
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(j.nodes[i].verdict, Verdict::pass);
    }
    EXPECT_EQ(j.nodes[5].verdict, Verdict::fail);
    EXPECT_DOUBLE_EQ(*j.cohort_of("a")->median, 50.0);
    EXPECT_DOUBLE_EQ(*j.cohort_of("b")->median, 100.0);
}

TEST(Judge, BelowMinCohortOnlyTheFloorApplies) {
    auto j = judge_cohorts("m", cohort({100, 10}), {}, "sku");
    EXPECT_EQ(j.nodes[1].verdict, Verdict::warn);
    EXPECT_THAT(j.nodes[1].detail, HasSubstr("fewer than min_cohort 3"));
    EXPECT_EQ(j.nodes[1].reference.basis, "none");
    auto floored = judge_cohorts("m", cohort({100, 10}), {0.9, 3, 50.0}, "sku");
    EXPECT_EQ(floored.nodes[0].verdict, Verdict::pass);
    EXPECT_EQ(floored.nodes[1].verdict, Verdict::fail);
    EXPECT_THAT(floored.nodes[1].detail, HasSubstr("under the floor 50"));
}

TEST(Judge, BelowMinCohortWithoutAFloorIsInconclusive) {
    auto j = judge_cohorts("m", cohort({100, 10}), {}, "sku");
    EXPECT_EQ(j.nodes[0].undecided, Undecided::inconclusive);
    EXPECT_EQ(j.nodes[1].undecided, Undecided::inconclusive);
    EXPECT_THAT(j.nodes[1].detail, HasSubstr("inconclusive"));
    EXPECT_THAT(j.nodes[1].detail, HasSubstr("no action"));
    auto floored = judge_cohorts("m", cohort({100, 10}), {0.9, 3, 50.0, std::nullopt}, "sku");
    EXPECT_EQ(floored.nodes[1].undecided, Undecided::none);  // the floor judged it
}

TEST(Judge, ANoisyCohortMakesItsSlowNodesInconclusive) {
    // Sorted {50, 55, 60, 100, 100, 100}: median (60 + 100) / 2 = 80, threshold 72. Deviations
    // {30, 25, 20, 20, 20, 20}: MAD 20, which is 25% of the median, above the 10% bound.
    JudgePolicy policy{0.9, 3, std::nullopt, 0.10};
    auto j = judge_cohorts("busbw_gbps", cohort({100, 100, 60, 55, 100, 50}), policy, "sku");
    const auto& ref = *j.cohort_of("a100");
    EXPECT_DOUBLE_EQ(*ref.median, 80.0);
    EXPECT_DOUBLE_EQ(*ref.mad, 20.0);
    EXPECT_TRUE(ref.noisy);
    for (int i : {0, 1, 4}) {
        EXPECT_EQ(j.nodes[i].verdict, Verdict::pass) << i;
    }
    for (int i : {2, 3, 5}) {
        EXPECT_EQ(j.nodes[i].verdict, Verdict::warn) << i;
        EXPECT_EQ(j.nodes[i].undecided, Undecided::inconclusive) << i;
        EXPECT_THAT(j.nodes[i].detail, HasSubstr("too noisy to judge (MAD 20 is 25% of the median, "
                                                 "above the bound 10%): no action"));
    }
    // Without the bound the same figures fail: the bound is what holds the action back.
    auto unbounded = judge_cohorts("m", cohort({100, 100, 60, 55, 100, 50}), {}, "sku");
    EXPECT_EQ(unbounded.nodes[2].verdict, Verdict::fail);
}

TEST(Judge, AFloorStillFailsInANoisyCohort) {
    JudgePolicy policy{0.9, 3, 52.0, 0.10};
    auto j = judge_cohorts("m", cohort({100, 100, 60, 55, 100, 50}), policy, "sku");
    EXPECT_EQ(j.nodes[5].verdict, Verdict::fail);  // 50 < floor 52: no cohort needed
    EXPECT_EQ(j.nodes[5].undecided, Undecided::none);
    EXPECT_EQ(j.nodes[3].undecided, Undecided::inconclusive);  // 55: above the floor
}

TEST(Judge, AQuietCohortIsJudgedUnderTheBound) {
    // Sorted {70, 98, 100, 100, 100, 102}: median 100; deviations sorted {0, 0, 0, 2, 2, 30}:
    // MAD 1, 1% of the median. The slow node fails as usual.
    JudgePolicy policy{0.9, 3, std::nullopt, 0.10};
    auto j = judge_cohorts("m", cohort({100, 100, 98, 102, 100, 70}), policy, "sku");
    EXPECT_FALSE(j.cohort_of("a100")->noisy);
    EXPECT_DOUBLE_EQ(*j.cohort_of("a100")->mad, 1.0);
    EXPECT_EQ(j.nodes[5].verdict, Verdict::fail);
    EXPECT_EQ(j.nodes[5].undecided, Undecided::none);
}

TEST(Judge, AMedianUnderTheFloorIsNoReference) {
    // Most of the cohort slow: median 40 is under the floor 60, so only the floor judges.
    auto j = judge_cohorts("m", cohort({40, 40, 40, 100, 100}), {0.9, 3, 60.0}, "sku");
    EXPECT_EQ(j.nodes[0].verdict, Verdict::fail);
    EXPECT_EQ(j.nodes[3].verdict, Verdict::pass);
    EXPECT_EQ(j.nodes[3].reference.basis, "floor");
    EXPECT_DOUBLE_EQ(*j.nodes[3].reference.threshold, 60.0);
    EXPECT_THAT(j.nodes[3].note, HasSubstr("judged against the floor only"));
}

TEST(Judge, ANodeBetweenTheFloorAndTheMedianRuleFailsOnTheFloor) {
    // Floor 95 above 0.9 x median 100: 93 passes the median rule and fails the floor.
    auto j = judge_cohorts("m", cohort({100, 100, 100, 93}), {0.9, 3, 95.0}, "sku");
    EXPECT_EQ(j.nodes[3].verdict, Verdict::fail);
    EXPECT_THAT(j.nodes[3].detail, HasSubstr("under the floor"));
}

TEST(Judge, AgainstItsOwnBaseline) {
    JudgePolicy policy;
    auto ok = judge_against_baseline("m", 95.0, 100.0, policy);
    EXPECT_EQ(ok.verdict, Verdict::pass);
    EXPECT_EQ(ok.reference.basis, "baseline");
    EXPECT_DOUBLE_EQ(*ok.reference.threshold, 90.0);
    auto slow = judge_against_baseline("m", 80.0, 100.0, policy);
    EXPECT_EQ(slow.verdict, Verdict::fail);
    EXPECT_THAT(slow.detail, HasSubstr("80% of its baseline 100"));
    EXPECT_EQ(judge_against_baseline("m", 1.0, std::nullopt, policy).verdict, Verdict::pass);
    policy.floor = 50.0;
    EXPECT_EQ(judge_against_baseline("m", 40.0, std::nullopt, policy).verdict, Verdict::fail);
}

// A 5-node cohort of pairs where two of them drew slow partners: figures {97, 51, 57, 57, 97}.
// Median 57, threshold 51.3: every node passes the median rule, the 51 at 90% of it. But 2 of 5
// (a quarter or more) run at 97 > 57 / 0.9: their median 97 puts the fast band's threshold at
// 87.3. The three under it are inconclusive and suspects, never a pass (a positive control in
// one_reference_test found exactly this: nodes at 51 % of the healthy rate passed).
TEST(Judge, ACohortSplitInTwoMakesItsSlowPartInconclusiveNotAPass) {
    auto j = judge_cohorts("busbw_gbps", cohort({97, 51.33, 56.62, 56.62, 97}), {}, "sku");
    const auto& ref = j.nodes[0].reference;
    EXPECT_DOUBLE_EQ(*ref.median, 56.62);
    EXPECT_EQ(ref.above_median_band, 2);
    ASSERT_TRUE(ref.fast_band_median.has_value());
    EXPECT_DOUBLE_EQ(*ref.fast_band_median, 97.0);
    for (int i : {1, 2, 3}) {
        EXPECT_EQ(j.nodes[i].verdict, Verdict::warn) << i;
        EXPECT_EQ(j.nodes[i].undecided, Undecided::inconclusive) << i;
        EXPECT_TRUE(j.nodes[i].suspect) << i;
    }
    EXPECT_THAT(j.nodes[1].detail,
                HasSubstr("passes the median rule (91% of the sku=a100 median 56.62), but 2 of 5 "
                          "nodes run at 111% of the median or more (their median 97)"));
    EXPECT_EQ(j.nodes[0].verdict, Verdict::pass);
    EXPECT_FALSE(j.nodes[0].suspect);
    // A node under the median rule is still a plain fail, and a suspect.
    j = judge_cohorts("busbw_gbps", cohort({97, 40, 57, 57, 97}), {}, "sku");
    EXPECT_EQ(j.nodes[1].verdict, Verdict::fail);
    EXPECT_TRUE(j.nodes[1].suspect);
}

// The fast band needs a quarter of the cohort: a few fast outliers in a large cohort (3 of 20
// at 120 %) are noise, and nothing changes.
TEST(Judge, AFewFastOutliersDoNotSplitTheCohort) {
    std::vector<double> values(17, 100.0);
    values.insert(values.end(), {120.0, 121.0, 122.0});
    auto j = judge_cohorts("busbw_gbps", cohort(values), {}, "sku");
    EXPECT_EQ(j.nodes[0].reference.above_median_band, 3);
    EXPECT_FALSE(j.nodes[0].reference.fast_band_median.has_value());
    for (const auto& n : j.nodes) {
        EXPECT_EQ(n.verdict, Verdict::pass) << n.node;
        EXPECT_FALSE(n.suspect) << n.node;
    }
}

TEST(Judge, NoSamplesNoJudgements) {
    auto j = judge_cohorts("m", {}, {}, "sku");
    EXPECT_TRUE(j.nodes.empty());
    EXPECT_TRUE(j.cohorts.empty());
}

}  // namespace
}  // namespace preflight::core
