// Fleet-majority drift on evaluated reports: exact findings, cohorts, majorities and thresholds.
#include "controller/run/drift.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::controller {
namespace {

using core::Verdict;
using ::testing::ElementsAre;

outcome::NodeReport node(const std::string& name, const std::string& sku = "h100") {
    outcome::NodeReport r;
    r.name = name;
    r.labels["sku"] = sku;
    r.verdict = Verdict::pass;
    return r;
}

outcome::NodeCheck roce(double np3, double rp3 = 1.0) {
    outcome::NodeCheck nc;
    nc.check = "link.roce";
    nc.verdict = np3 == 1.0 && rp3 == 1.0 ? Verdict::pass : Verdict::fail;
    nc.metrics = {
        {"eth2.roce_np.prio3", np3}, {"eth2.roce_rp.prio3", rp3}, {"dcqcn_enabled", np3 + rp3}};
    return nc;
}

std::vector<outcome::NodeReport> fleet(int n, const std::string& sku = "h100",
                                       const std::string& prefix = "gpu") {
    std::vector<outcome::NodeReport> nodes;
    for (int i = 0; i < n; ++i) {
        auto r = node(prefix + std::to_string(i + 1), sku);
        r.checks.push_back(roce(1.0));
        nodes.push_back(std::move(r));
    }
    return nodes;
}

TEST(Drift, DcqcnOffOnOneNodeOf64) {
    auto nodes = fleet(64);
    nodes[41].checks[0] = roce(0.0);
    core::EvaluationConfig config;
    auto findings = drift_findings(nodes, config);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_THAT(
        findings.at("gpu42"),
        ElementsAre("link.roce: eth2: DCQCN off on prio 3 (roce_np); on for 63 of 64 nodes"));

    add_drift(nodes, config);
    const auto& drifted = nodes[41];
    ASSERT_EQ(drifted.checks.size(), 2u);
    EXPECT_EQ(drifted.checks[1].check, "drift");
    EXPECT_EQ(drifted.checks[1].verdict, Verdict::warn);
    EXPECT_EQ(drifted.checks[1].detail,
              "link.roce: eth2: DCQCN off on prio 3 (roce_np); on for 63 of 64 nodes");
    EXPECT_THAT(
        drifted.reasons,
        ElementsAre("warn: drift: link.roce: eth2: DCQCN off on prio 3 (roce_np); on for 63 "
                    "of 64 nodes"));
    EXPECT_EQ(drifted.verdict, Verdict::warn);  // was pass in this synthetic report
    EXPECT_EQ(nodes[0].checks.size(), 1u);
    EXPECT_EQ(nodes[0].verdict, Verdict::pass);
}

TEST(Drift, FailedNodeKeepsFailAndDriftGoesBeforeSkips) {
    auto nodes = fleet(4);
    nodes[3].checks[0] = roce(1.0, 0.0);
    nodes[3].verdict = Verdict::fail;
    nodes[3].reasons = {"fail: link.roce: eth2: DCQCN off on prio 3 (roce_rp)",
                        "skip: link.peermem: NVIDIA driver not loaded"};
    core::EvaluationConfig config;
    add_drift(nodes, config);
    EXPECT_EQ(nodes[3].verdict, Verdict::fail);
    EXPECT_THAT(nodes[3].reasons,
                ElementsAre("fail: link.roce: eth2: DCQCN off on prio 3 (roce_rp)",
                            "warn: drift: link.roce: eth2: DCQCN off on prio 3 (roce_rp); on for 3 "
                            "of 4 nodes",
                            "skip: link.peermem: NVIDIA driver not loaded"));
}

outcome::NodeCheck passed(const std::string& check, std::map<std::string, double> metrics) {
    outcome::NodeCheck nc;
    nc.check = check;
    nc.verdict = Verdict::pass;
    nc.metrics = std::move(metrics);
    return nc;
}

TEST(Drift, GenericSettingsMtuRateWidthPeermem) {
    std::vector<outcome::NodeReport> nodes;
    for (int i = 0; i < 5; ++i) {
        auto r = node("n" + std::to_string(i + 1));
        r.checks = {
            passed("link.netdev", {{"eth0.mtu", 9000}, {"mtu", 9000}, {"eth0.carrier_changes", i}}),
            passed("link.infiniband", {{"mlx5_3.1.rate_gbps", 400}, {"mlx5_3.1.symbol_error", i}}),
            passed("link.pcie", {{"0000:52:00.0.width", 16}, {"0000:52:00.0.speed_gts", 2.5 * i}}),
            passed("link.peermem", {{"peermem_registered", 1}}),
        };
        nodes.push_back(std::move(r));
    }
    nodes[1].checks[0].metrics["eth0.mtu"] = 1500;
    nodes[1].checks[0].metrics["mtu"] = 1500;
    nodes[2].checks[1].metrics["mlx5_3.1.rate_gbps"] = 100;
    nodes[3].checks[2].metrics["0000:52:00.0.width"] = 8;
    nodes[4].checks[3].metrics["peermem_registered"] = 0;
    core::EvaluationConfig config;
    auto findings = drift_findings(nodes, config);
    // Counters and GPU link speed differ on every node and are not settings.
    EXPECT_EQ(findings.count("n1"), 0u);
    EXPECT_THAT(findings.at("n2"), ElementsAre("link.netdev: eth0.mtu 1500; 9000 on 4 of 5 nodes"));
    EXPECT_THAT(findings.at("n3"),
                ElementsAre("link.infiniband: mlx5_3.1.rate_gbps 100; 400 on 4 of 5 nodes"));
    EXPECT_THAT(findings.at("n4"),
                ElementsAre("link.pcie: 0000:52:00.0.width 8; 16 on 4 of 5 nodes"));
    EXPECT_THAT(findings.at("n5"),
                ElementsAre("link.peermem: peermem_registered 0; 1 on 4 of 5 nodes"));
}

TEST(Drift, GpuVersionsAreNamedByTheirText) {
    // gpu.health reports each version as a digest (a metric) with its text (a fact).
    std::vector<outcome::NodeReport> nodes;
    for (int i = 0; i < 4; ++i) {
        auto r = node("g" + std::to_string(i + 1));
        const std::string vbios = i == 2 ? "96.00.74.00.11" : "96.00.74.00.01";
        auto nc = passed("gpu.health", {{"vbios", std::hash<std::string>{}(vbios) % 100000}});
        nc.facts["vbios"] = vbios;
        r.checks = {nc};
        nodes.push_back(std::move(r));
    }
    core::EvaluationConfig config;
    auto findings = drift_findings(nodes, config);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_THAT(findings.at("g3"),
                ElementsAre("gpu.health: vbios 96.00.74.00.11; 96.00.74.00.01 on 3 of 4 nodes"));
}

TEST(Drift, CohortsAreSeparate) {
    auto nodes = fleet(4, "h100", "a");
    auto other = fleet(4, "a100", "b");
    for (auto& r : other) {
        r.checks[0] = roce(0.0);  // the a100 fleet runs without DCQCN: its own majority
    }
    nodes.insert(nodes.end(), other.begin(), other.end());
    core::EvaluationConfig config;
    EXPECT_TRUE(drift_findings(nodes, config).empty());
}

TEST(Drift, NoStrictMajorityOrSmallCohortIsNotJudged) {
    core::EvaluationConfig config;
    auto split = fleet(4);
    split[0].checks[0] = roce(0.0);
    split[1].checks[0] = roce(0.0);
    EXPECT_TRUE(drift_findings(split, config).empty());

    auto small = fleet(2);
    small[0].checks[0] = roce(0.0);
    EXPECT_TRUE(drift_findings(small, config).empty());  // min_cohort 3
    config.min_cohort = 2;
    auto three = fleet(3);
    three[2].checks[0] = roce(0.0);
    EXPECT_EQ(drift_findings(three, config).at("gpu3").size(), 1u);
}

TEST(Drift, ErrorAndSkipResultsAreNotCounted) {
    auto nodes = fleet(4);
    nodes[0].checks[0] = roce(0.0);
    nodes[0].checks[0].verdict = Verdict::error;
    core::EvaluationConfig config;
    EXPECT_TRUE(drift_findings(nodes, config).empty());
}

TEST(Drift, SettingMetricClassification) {
    EXPECT_TRUE(is_setting_metric("link.roce", "eth2.roce_np.prio3"));
    EXPECT_TRUE(is_setting_metric("link.roce", "ens1f0.np.x.roce_rp.prio0"));
    EXPECT_FALSE(is_setting_metric("link.roce", "dcqcn_enabled"));
    EXPECT_TRUE(is_setting_metric("link.roce", "eth2.pfc_en"));
    EXPECT_FALSE(is_setting_metric("link.netdev", "mtu"));
    EXPECT_TRUE(is_setting_metric("link.netdev", "eth0.speed_mbps"));
    EXPECT_FALSE(is_setting_metric("link.pcie", "0000:1b:00.0.speed_gts"));
    EXPECT_FALSE(is_setting_metric("collective.gloo_allreduce", "busbw_gbps"));
}

}  // namespace
}  // namespace preflight::controller
