// The fixed reasons: one text per finding class, no figures in them, each check's failure words
// (as the checks write them, plugins/) mapped to its class, and our reasons of older versions
// (with numbers and run ids) still recognised as ours.
#include "outcome/reasons.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "outcome/breaker.hpp"

namespace preflight::outcome {
namespace {

using core::Verdict;

TEST(FindingClasses, OneRowPerClassInEnumOrderWithBoundedFixedTexts) {
    std::set<std::string_view> reasons;
    int i = 0;
    for (const auto& row : finding_classes()) {
        EXPECT_EQ(static_cast<int>(row.finding), i++) << row.name;
        EXPECT_TRUE(reason_is_ours(row.reason)) << row.reason;
        EXPECT_LE(row.reason.size(), k_max_reason_bytes);
        // No figures: `sinfo -R` groups nodes by reason text.
        EXPECT_EQ(row.reason.find_first_of("0123456789()"), std::string_view::npos) << row.reason;
        EXPECT_TRUE(reasons.insert(row.reason).second) << "duplicate " << row.reason;
        EXPECT_EQ(fixed_reason(row.finding), row.reason);
    }
    EXPECT_EQ(i, 17);
    EXPECT_EQ(fixed_reason(FindingClass::busbw_low), "preflight: busbw low");
    EXPECT_EQ(fixed_reason(FindingClass::link_down), "preflight: link down");
    EXPECT_EQ(fixed_reason(FindingClass::link_degraded), "preflight: link degraded");
    EXPECT_EQ(fixed_reason(FindingClass::data_corruption), "preflight: data corruption");
    EXPECT_EQ(fixed_reason(FindingClass::check_error), "preflight: check error");
    EXPECT_EQ(fixed_reason(FindingClass::unreachable), "preflight: unreachable");
}

TEST(ClassifyFinding, EachCheckFailureKindHasItsClass) {
    // The failure words below are the ones the checks write (plugins/link/netdev.cpp,
    // infiniband.cpp, pcie.cpp, roce.cpp, peermem.cpp, collective/*, gpu/inventory.cpp).
    EXPECT_EQ(classify_finding("link.netdev", Verdict::fail, "eth0: operstate down"),
              FindingClass::link_down);
    EXPECT_EQ(
        classify_finding("link.netdev", Verdict::fail, "eth1: missing (no /sys/class/net/eth1)"),
        FindingClass::link_down);
    EXPECT_EQ(classify_finding("link.infiniband", Verdict::fail,
                               "mlx5_0/1: state 1: DOWN, phys_state 3: Disabled"),
              FindingClass::link_down);
    EXPECT_EQ(classify_finding("link.infiniband", Verdict::fail, "active ports 1, expected 2"),
              FindingClass::link_down);
    EXPECT_EQ(
        classify_finding("link.netdev", Verdict::fail, "eth0: speed 100000 Mb/s < expected 400000"),
        FindingClass::link_degraded);
    EXPECT_EQ(
        classify_finding("link.pcie", Verdict::fail, "0000:1b:00.0 (NIC): width x8, expected x16"),
        FindingClass::link_degraded);
    EXPECT_EQ(classify_finding("link.netdev", Verdict::fail, "eth0: mtu 1500 != expected 9000"),
              FindingClass::config_mismatch);
    EXPECT_EQ(classify_finding("link.roce", Verdict::fail, "mlx5_0: roce_np prio 3 disabled"),
              FindingClass::config_mismatch);
    EXPECT_EQ(classify_finding("link.peermem", Verdict::fail, "nvidia_peermem not loaded"),
              FindingClass::config_mismatch);
    EXPECT_EQ(classify_finding("collective.nccl_allreduce", Verdict::fail,
                               "data check failed: 12 wrong elements over all ranks"),
              FindingClass::data_corruption);
    EXPECT_EQ(
        classify_finding("collective.gloo_allreduce", Verdict::fail, "data check failed on rank 3"),
        FindingClass::data_corruption);
    EXPECT_EQ(classify_finding("gpu.inventory", Verdict::fail, "7 GPU(s), expected 8"),
              FindingClass::gpu_mismatch);
    // The GPU checks name their class in their detail's first words.
    EXPECT_EQ(classify_finding("gpu.xid", Verdict::fail,
                               "gpu xid: GPU 3 (0000:52:00.0): Xid 48 Double Bit ECC Error"),
              FindingClass::gpu_xid);
    EXPECT_EQ(classify_finding("gpu.health", Verdict::fail,
                               "gpu memory: GPU 1 (00000000:9E:00.0): row remapping pending"),
              FindingClass::gpu_memory);
    EXPECT_EQ(classify_finding("gpu.health", Verdict::fail, "nvlink errors: GPU 0 link 3 down"),
              FindingClass::nvlink_errors);
    EXPECT_EQ(classify_finding("exec.dcgm_diag", Verdict::fail, "gpu memory: GPU 0: memory Fail"),
              FindingClass::gpu_memory);
    EXPECT_EQ(classify_finding("gpu.compute", Verdict::pass, "", "gemm_bf16_tflops"),
              FindingClass::gpu_slow);
    EXPECT_EQ(classify_finding("gpu.health", Verdict::fail, "gpu xidx: not a class"),
              FindingClass::gpu_mismatch);
    EXPECT_EQ(classify_finding("collective.gloo_allreduce", Verdict::pass, "", "busbw_gbps"),
              FindingClass::busbw_low);
    EXPECT_EQ(classify_finding("link.netdev", Verdict::pass, "", "eth0.speed_mbps"),
              FindingClass::link_degraded);
    EXPECT_EQ(classify_finding("exec.nccl_tests", Verdict::fail, "all_reduce_perf exit 1: ..."),
              FindingClass::check_failed);
    EXPECT_EQ(
        classify_finding("link.netdev", Verdict::error, "not finished within the 20 s budget"),
        FindingClass::check_error);
}

TEST(ClassifyNode, NoFailingCheckIsAnErrorOrAGenericFailure) {
    NodeReport n;
    n.verdict = Verdict::error;
    EXPECT_EQ(reason_for(n), "preflight: check error");
    n.verdict = Verdict::fail;
    n.reasons = {"group r1-g3 failed: peer lost"};
    EXPECT_EQ(reason_for(n), "preflight: check failed");
    EXPECT_EQ(figures_for(n, "r7"), "preflight: group r1-g3 failed: peer lost run=r7");
}

TEST(Figures, BoundedOneLineAndKeepTheRunId) {
    NodeReport n;
    n.verdict = Verdict::fail;
    NodeCheck c;
    c.check = "link.netdev";
    c.verdict = Verdict::fail;
    c.detail = std::string(400, 'x') + "\nsecond";
    n.checks.push_back(c);
    const std::string f = figures_for(n, "20260101T000000Z-ab12");
    EXPECT_LE(f.size(), k_max_comment_bytes);
    EXPECT_EQ(f.find('\n'), std::string::npos);
    EXPECT_EQ(f.substr(f.size() - 26), " run=20260101T000000Z-ab12");
}

TEST(Ownership, ReasonsOfOlderVersionsAreStillOurs) {
    // Reasons as earlier versions wrote them, with figures and run ids.
    EXPECT_TRUE(reason_is_ours(
        "preflight: collective.gloo_allreduce busbw_gbps 2.1 < 90% of median 4 (run r7)"));
    EXPECT_TRUE(
        reason_is_ours("preflight: prolog link.netdev eth0: mtu 1500 != expected 9000 "
                       "(job 12)"));
    EXPECT_TRUE(reason_is_ours("preflight: uncertified: error (run r3)"));
    EXPECT_FALSE(reason_is_ours("bad dimm ticket 123"));
    EXPECT_FALSE(reason_is_ours("Prolog error"));
    EXPECT_FALSE(reason_is_ours(" preflight: leading space is an operator's copy"));
    EXPECT_FALSE(reason_is_ours(""));
}

TEST(Breaker, ShareAndAbsoluteCap) {
    BreakerPolicy p;  // 0.10, min 1, no absolute cap
    EXPECT_EQ(allowed_actions(p, 4), 1);
    EXPECT_EQ(allowed_actions(p, 100), 10);
    EXPECT_EQ(allowed_actions(p, 0), 1);
    p.max_actions = 3;
    EXPECT_EQ(allowed_actions(p, 100), 3);  // the absolute cap wins over the share
    p.min_actions = 5;
    EXPECT_EQ(allowed_actions(p, 10), 3);  // ... and over min_actions
    p = BreakerPolicy{};
    p.max_fraction = 0.29;
    EXPECT_EQ(allowed_actions(p, 100), 29);
    p.max_fraction = -1.0;
    p.min_actions = 0;
    EXPECT_EQ(allowed_actions(p, 100), 0);
}

TEST(Breaker, RefusesAboveTheCapSaysTheCountsAndForceIsVisible) {
    BreakerPolicy p;
    const MarkCount two_of_five{2, 5, "partition batch"};
    BreakerDecision d = check_breaker(p, two_of_five, "node03");
    EXPECT_TRUE(d.refused);
    EXPECT_FALSE(d.forced);
    EXPECT_EQ(d.allowed, 1);
    EXPECT_EQ(d.message,
              "circuit breaker: marking node03 would make 2 of 5 nodes in the partition batch "
              "taken out by preflight, more than the allowed 1 (max_action_fraction 0.10, "
              "min_actions 1, max_actions none); left alone \xE2\x80\x94 check the fabric, resume "
              "nodes, or raise the caps");
    EXPECT_FALSE(check_breaker(p, MarkCount{1, 5, "cluster"}, "node03").refused);
    p.force = true;
    d = check_breaker(p, two_of_five, "node03");
    EXPECT_FALSE(d.refused);
    EXPECT_TRUE(d.forced);
    EXPECT_NE(d.message.find("OVERRIDDEN with --force"), std::string::npos);
}

}  // namespace
}  // namespace preflight::outcome
