#include "outcome/actions.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../integrations/run_targets.hpp"
#include "integrations/k8s/taint.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::apply_actions;
using preflight::testing::plan_actions;

using core::Verdict;

NodeReport node(const std::string& name, Verdict verdict) {
    NodeReport n;
    n.name = name;
    n.verdict = verdict;
    NodeCheck c;
    c.check = "collective.gloo_allreduce";
    c.verdict = verdict;
    c.metrics = {{"busbw_gbps", verdict == Verdict::fail ? 8.123 : 20.0}};
    c.median = 20.0;
    c.threshold = 18.0;
    c.fraction_of_median = c.metrics["busbw_gbps"] / 20.0;
    n.checks.push_back(c);
    if (verdict == Verdict::fail) {
        n.reasons.push_back("collective.gloo_allreduce busbw_gbps 8.12 under 90% of median 20");
    }
    return n;
}

RunReport cluster(int total, int failed, int errors = 0) {
    RunReport r;
    r.run_id = "r42";
    for (int i = 0; i < total; ++i) {
        const std::string name = "node" + std::to_string(i);
        Verdict v =
            i < failed ? Verdict::fail : (i < failed + errors ? Verdict::error : Verdict::pass);
        r.nodes.push_back(node(name, v));
    }
    return r;
}

bool valid_utf8(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t len = b < 0x80             ? 1
                          : (b & 0xE0) == 0xC0 ? 2
                          : (b & 0xF0) == 0xE0 ? 3
                          : (b & 0xF8) == 0xF0 ? 4
                                               : 0;
        if (len == 0 || i + len > s.size()) {
            return false;
        }
        for (std::size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
                return false;
            }
        }
        i += len;
    }
    return true;
}

bool has_control(const std::string& s) {
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) {
            return true;
        }
    }
    return false;
}

// A fake scontrol: records every argv and answers with a scripted result.
class FakeRunner : public core::CommandRunner {
  public:
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions& options) override {
        // The breaker counts the cluster's nodes before a drain: `scontrol show node -o` lists
        // cluster_size idle nodes.
        if (argv.size() == 4 && argv[1] == "show" && argv[2] == "node") {
            queries.push_back(argv);
            std::string out;
            for (int i = 0; i < cluster_size; ++i) {
                out += "NodeName=node" + std::to_string(i) +
                       " NodeAddr=10.0.0.1 State=IDLE Partitions=batch\n";
            }
            return core::ProcessResult{0, 0, false, out};
        }
        // The slurm sink reads the node's state before draining it: answer like scontrol does.
        if (argv.size() >= 5 && argv[1] == "show" && argv[2] == "node") {
            queries.push_back(argv);
            std::string state = operator_reason.empty() ? "IDLE" : "IDLE+DRAIN";
            std::string reason =
                operator_reason.empty() ? "" : " Reason=" + operator_reason + " [ops@2026-01-01]";
            return core::ProcessResult{0, 0, false,
                                       "NodeName=" + argv[4] + " NodeAddr=10.0.0.1 State=" + state +
                                           " Partitions=batch" + reason + "\n"};
        }
        calls.push_back(argv);
        timeouts.push_back(options.timeout);
        if (!start_error.empty()) {
            return core::Error{start_error};
        }
        return result;
    }
    std::vector<std::vector<std::string>> calls;
    std::vector<std::vector<std::string>> queries;
    std::string operator_reason;  // non-empty: the node is drained with this reason
    int cluster_size = 20;
    std::vector<std::optional<std::chrono::milliseconds>> timeouts;
    core::ProcessResult result{0, 0, false, ""};
    std::string start_error;
};

TEST(Reason, MedianFailureIsAFixedTextAndTheFiguresGoBeside) {
    const NodeReport n = node("gpu01", Verdict::fail);
    EXPECT_EQ(reason_for(n), "preflight: busbw low");
    EXPECT_EQ(figures_for(n, "r42"),
              "preflight: check=collective.gloo_allreduce metric=busbw_gbps value=8.12 "
              "threshold=18.0 median=20.0 run=r42");
}

TEST(Reason, LinkFailureIsLinkDownWhateverTheNodeReasonsSay) {
    NodeReport n;
    n.name = "gpu02";
    n.verdict = Verdict::fail;
    NodeCheck c;
    c.check = "link.netdev";
    c.verdict = Verdict::fail;
    c.detail = "eth0: operstate down";
    n.checks.push_back(c);
    n.reasons = {"link.netdev: eth0 operstate down\nsecond line", "other"};
    EXPECT_EQ(reason_for(n), "preflight: link down");
    EXPECT_EQ(figures_for(n, "r1"), "preflight: check=link.netdev eth0: operstate down run=r1");
}

TEST(Reason, FloorFailureIsBusbwLowWithTheFloorInTheFigures) {
    NodeReport n = node("gpu03", Verdict::fail);
    n.checks[0].metrics["busbw_gbps"] = 19.0;  // above the median threshold, under a floor
    n.checks[0].floor = 19.5;
    n.reasons = {"collective.gloo_allreduce busbw_gbps 19.0 under floor 19.5"};
    EXPECT_EQ(reason_for(n), "preflight: busbw low");
    EXPECT_NE(figures_for(n, "r9").find("value=19.0 threshold=18.0 median=20.0 floor=19.5 run=r9"),
              std::string::npos)
        << figures_for(n, "r9");
}

TEST(Reason, KeepsExistingPrefix) {
    EXPECT_EQ(sanitize_reason("preflight: already"), "preflight: already");
    EXPECT_EQ(sanitize_reason(""), "preflight:");
}

TEST(Reason, NoControlCharactersOrNewlines) {
    const std::string r = sanitize_reason("a\nb\r\tc\x1b[31mred\x7f\xC2\x9B", "(run x)");
    EXPECT_FALSE(has_control(r)) << r;
    EXPECT_EQ(r.find('\n'), std::string::npos);
    EXPECT_TRUE(valid_utf8(r));
    EXPECT_EQ(r.rfind("preflight:", 0), 0u);
}

TEST(Reason, InvalidUtf8IsReplaced) {
    const std::string r = sanitize_reason("bad \xFF\xC3 bytes");
    EXPECT_TRUE(valid_utf8(r)) << r;
}

TEST(Reason, LimitAndUtf8SafeTruncation) {
    // Every cut position lands somewhere in a run of 2-, 3- and 4-byte sequences.
    for (int pad = 0; pad < 8; ++pad) {
        std::string text(static_cast<std::size_t>(pad), 'x');
        for (int i = 0; i < 60; ++i) {
            text += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // é € 😀
        }
        for (const std::string suffix : {"", "(run r42)"}) {
            const std::string r = sanitize_reason(text, suffix);
            EXPECT_LE(r.size(), k_max_reason_bytes);
            EXPECT_TRUE(valid_utf8(r)) << pad;
            EXPECT_EQ(r.rfind("preflight:", 0), 0u);
            const std::string ellipsis = "\xE2\x80\xA6";
            if (std::string(suffix).empty()) {
                EXPECT_EQ(r.substr(r.size() - 3), ellipsis);
            } else {
                EXPECT_NE(r.find(ellipsis + " (run r42)"), std::string::npos) << r;
                EXPECT_EQ(r.substr(r.size() - 9), "(run r42)");
            }
        }
    }
}

TEST(Reason, LongRunIdIsTruncatedToo) {
    const std::string r = sanitize_reason("short", "(run " + std::string(200, 'a') + ")");
    EXPECT_LE(r.size(), k_max_reason_bytes);
    EXPECT_EQ(r.rfind("preflight: short (run aaa", 0), 0u);
}

TEST(Reason, ExactlyAtLimitIsNotTruncated) {
    const std::string body = "preflight: " + std::string(k_max_reason_bytes - 11, 'z');
    ASSERT_EQ(body.size(), k_max_reason_bytes);
    EXPECT_EQ(sanitize_reason(body), body);
}

TEST(TaintValue, SanitizedLabelValue) {
    EXPECT_EQ(taint_value_for("collective.gloo_allreduce"), "collective.gloo_allreduce");
    EXPECT_EQ(taint_value_for("a b/c"), "a-b-c");
    EXPECT_EQ(taint_value_for("..x.."), "x");
    EXPECT_EQ(taint_value_for(""), "unknown");
    EXPECT_EQ(taint_value_for("///"), "unknown");
    const std::string v = taint_value_for(std::string(100, 'q'));
    EXPECT_EQ(v.size(), 63u);
}

TEST(Plan, SlurmArgvExact) {
    RunReport r = cluster(10, 1);
    core::ActionsConfig cfg;
    cfg.scontrol = "/usr/bin/scontrol";
    plan_actions(r, cfg);
    ASSERT_EQ(r.actions.size(), 1u);
    const Action& a = r.actions[0];
    EXPECT_EQ(a.kind, "drain");
    EXPECT_EQ(a.sink, "slurm");
    EXPECT_EQ(a.node, "node0");
    // A fixed reason (sinfo -R groups it); the figures in the node's Comment.
    EXPECT_EQ(a.reason, "preflight: busbw low");
    EXPECT_EQ(a.argv, (std::vector<std::string>{
                          "/usr/bin/scontrol", "update", "NodeName=node0", "State=DRAIN",
                          "Reason=preflight: busbw low",
                          "Comment=preflight: check=collective.gloo_allreduce metric=busbw_gbps "
                          "value=8.12 threshold=18.0 median=20.0 run=r42"}));
    EXPECT_FALSE(a.applied);
    EXPECT_TRUE(a.error.empty());
    EXPECT_FALSE(r.breaker.tripped);
}

TEST(Plan, K8sPatch) {
    RunReport r = cluster(10, 1);
    core::ActionsConfig cfg;
    cfg.targets = {"slurm", "k8s", "k8s"};
    plan_actions(r, cfg);
    ASSERT_EQ(r.actions.size(), 2u);
    const Action& a = r.actions[1];
    EXPECT_EQ(a.kind, "taint");
    EXPECT_EQ(a.sink, "k8s");
    EXPECT_TRUE(a.argv.empty());
    EXPECT_EQ(a.patch, nlohmann::json::parse(R"({"spec":{"taints":[{"key":"preflight.dev/degraded",
        "value":"collective.gloo_allreduce","effect":"NoSchedule"}]}})"));
}

TEST(Plan, OnlyFailedNodesGetActions) {
    RunReport r = cluster(10, 1, 2);
    r.nodes[5].verdict = Verdict::warn;
    plan_actions(r, core::ActionsConfig{});
    ASSERT_EQ(r.actions.size(), 1u);
    EXPECT_EQ(r.actions[0].node, "node0");
}

TEST(Plan, ReplanReplacesActions) {
    RunReport r = cluster(10, 1);
    plan_actions(r, core::ActionsConfig{});
    plan_actions(r, core::ActionsConfig{});
    EXPECT_EQ(r.actions.size(), 1u);
}

TEST(Breaker, OneOfEightAllowedByMinActions) {
    RunReport r = cluster(8, 1);
    plan_actions(r, core::ActionsConfig{});
    EXPECT_FALSE(r.breaker.tripped);
    EXPECT_EQ(r.breaker.candidates, 8);
    EXPECT_EQ(r.breaker.planned, 1);
    EXPECT_EQ(r.breaker.allowed, 1);
    EXPECT_TRUE(r.breaker.message.empty());
}

TEST(Breaker, TwoOfEightTrips) {
    RunReport r = cluster(8, 2);
    plan_actions(r, core::ActionsConfig{});
    EXPECT_TRUE(r.breaker.tripped);
    EXPECT_EQ(r.breaker.planned, 2);
    EXPECT_EQ(r.breaker.allowed, 1);
    ASSERT_EQ(r.actions.size(), 2u);  // still planned, so the operator sees them
    for (const auto& a : r.actions) {
        EXPECT_FALSE(a.applied);
        EXPECT_EQ(a.error, "circuit breaker tripped");
    }
    EXPECT_EQ(r.breaker.message,
              "circuit breaker: 2 of 8 nodes (25.0 %) failed, more than the allowed 1 "
              "(max_action_fraction 0.10); no action taken \xE2\x80\x94 check the fabric or raise "
              "actions.max_action_fraction");
}

TEST(Breaker, TrippedBreakerAppliesNothing) {
    RunReport r = cluster(8, 2);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    EXPECT_TRUE(runner.calls.empty());
    EXPECT_TRUE(runner.queries.empty());
    EXPECT_EQ(exit_code_for(r), 3);
}

TEST(Breaker, ForceOverridesItVisiblyAndActsOnEveryFailedNode) {
    RunReport r = cluster(8, 2);
    plan_actions(r, core::ActionsConfig{});
    force_past_breaker(r);
    EXPECT_TRUE(r.breaker.tripped);  // the report still says it tripped ...
    EXPECT_TRUE(r.breaker.forced);   // ... and that the operator overrode it
    EXPECT_NE(r.breaker.message.find("OVERRIDDEN with --force"), std::string::npos);
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    ASSERT_EQ(runner.calls.size(), 2u);
    for (const auto& a : r.actions) {
        EXPECT_TRUE(a.applied) << a.error;
    }
    EXPECT_EQ(exit_code_for(r), 1);
}

TEST(Breaker, ForceWithoutATrippedBreakerChangesNothing) {
    RunReport r = cluster(8, 1);
    plan_actions(r, core::ActionsConfig{});
    force_past_breaker(r);
    EXPECT_FALSE(r.breaker.forced);
    EXPECT_TRUE(r.breaker.message.empty());
}

TEST(Breaker, MinActionsRaisesAllowance) {
    RunReport r = cluster(8, 3);
    core::ActionsConfig cfg;
    cfg.min_actions = 3;
    plan_actions(r, cfg);
    EXPECT_FALSE(r.breaker.tripped);
    EXPECT_EQ(r.breaker.allowed, 3);
    cfg.min_actions = 2;
    plan_actions(r, cfg);
    EXPECT_TRUE(r.breaker.tripped);
}

TEST(Breaker, FractionEdgeCases) {
    core::ActionsConfig cfg;
    cfg.min_actions = 0;

    RunReport exact = cluster(10, 1);  // 0.1 * 10 = 1: exactly at the limit
    plan_actions(exact, cfg);
    EXPECT_EQ(exact.breaker.allowed, 1);
    EXPECT_FALSE(exact.breaker.tripped);

    cfg.max_action_fraction = 0.29;  // 0.29 * 100 is 28.999999999999996 in binary
    RunReport hundred = cluster(100, 29);
    plan_actions(hundred, cfg);
    EXPECT_EQ(hundred.breaker.allowed, 29);
    EXPECT_FALSE(hundred.breaker.tripped);

    cfg.max_action_fraction = 0.0;
    RunReport none = cluster(10, 1);
    plan_actions(none, cfg);
    EXPECT_EQ(none.breaker.allowed, 0);
    EXPECT_TRUE(none.breaker.tripped);

    cfg.max_action_fraction = 1.0;
    RunReport all = cluster(4, 4);
    plan_actions(all, cfg);
    EXPECT_FALSE(all.breaker.tripped);

    cfg.max_action_fraction = 5.0;  // clamped to 1
    plan_actions(all, cfg);
    EXPECT_EQ(all.breaker.allowed, 4);
    EXPECT_DOUBLE_EQ(all.breaker.max_action_fraction, 1.0);

    cfg.max_action_fraction = -1.0;
    cfg.min_actions = -3;
    RunReport neg = cluster(4, 1);
    plan_actions(neg, cfg);
    EXPECT_EQ(neg.breaker.allowed, 0);
    EXPECT_TRUE(neg.breaker.tripped);

    RunReport empty;
    plan_actions(empty, core::ActionsConfig{});
    EXPECT_FALSE(empty.breaker.tripped);
    EXPECT_EQ(empty.breaker.candidates, 0);
    EXPECT_TRUE(empty.actions.empty());
}

TEST(Breaker, CountsDistinctNodesNotActions) {
    RunReport r = cluster(20, 2);
    core::ActionsConfig cfg;
    cfg.targets = {"slurm", "k8s"};
    plan_actions(r, cfg);  // 4 actions, 2 nodes, allowed 2
    EXPECT_EQ(r.actions.size(), 4u);
    EXPECT_EQ(r.breaker.planned, 2);
    EXPECT_FALSE(r.breaker.tripped);
}

TEST(Apply, RunsScontrolArgvWithTimeout) {
    RunReport r = cluster(20, 2);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(5000));
    ASSERT_EQ(runner.calls.size(), 2u);
    EXPECT_EQ(runner.calls[0], r.actions[0].argv);
    EXPECT_EQ(runner.calls[1], r.actions[1].argv);
    EXPECT_EQ(runner.timeouts[0], std::chrono::milliseconds(5000));
    for (const auto& a : r.actions) {
        EXPECT_TRUE(a.applied);
        EXPECT_TRUE(a.error.empty());
    }
    // Applying again does not drain twice.
    apply_actions(r, runner, std::chrono::milliseconds(5000));
    EXPECT_EQ(runner.calls.size(), 2u);
}

TEST(Apply, NeverOverwritesAnOperatorsDrain) {
    RunReport r = cluster(10, 1);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    runner.operator_reason = "RMA ticket 42";
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    ASSERT_EQ(r.actions.size(), 1u);
    EXPECT_EQ(runner.queries.size(), 1u);  // its own state only: left alone before counting
    EXPECT_TRUE(runner.calls.empty());     // no update sent
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_NE(r.actions[0].error.find("RMA ticket 42"), std::string::npos) << r.actions[0].error;

    // A node we drained earlier gets our new reason.
    runner.operator_reason = "preflight: old finding (run r1)";
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    EXPECT_EQ(runner.calls.size(), 1u);
    EXPECT_TRUE(r.actions[0].applied);
}

TEST(Apply, ScontrolFailureRecorded) {
    RunReport r = cluster(10, 1);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    runner.result.exit_code = 1;
    runner.result.output = "\nslurm_update error: Invalid node name specified\nmore\n";
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    ASSERT_EQ(r.actions.size(), 1u);
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error.rfind("scontrol: ", 0), 0u) << r.actions[0].error;
    EXPECT_NE(r.actions[0].error.find("slurm_update error: Invalid node name specified"),
              std::string::npos);
    EXPECT_EQ(r.actions[0].error.find("more"), std::string::npos);
    EXPECT_EQ(r.actions[0].error.find('\n'), std::string::npos);
}

TEST(Apply, ScontrolTimeoutRecorded) {
    RunReport r = cluster(10, 1);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    runner.result = core::ProcessResult{-1, 9, true, ""};
    apply_actions(r, runner, std::chrono::milliseconds(10));
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error.rfind("scontrol: ", 0), 0u);
}

TEST(Apply, ScontrolMissingRecorded) {
    RunReport r = cluster(10, 1);
    plan_actions(r, core::ActionsConfig{});
    FakeRunner runner;
    runner.start_error = "exec scontrol: No such file or directory";
    apply_actions(r, runner, std::chrono::milliseconds(10));
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error, "scontrol: exec scontrol: No such file or directory");
}

TEST(Apply, TrippedBreakerNeverRunsAnything) {
    RunReport r = cluster(8, 4);
    plan_actions(r, core::ActionsConfig{});
    ASSERT_TRUE(r.breaker.tripped);
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    EXPECT_TRUE(runner.calls.empty());
    for (const auto& a : r.actions) {
        EXPECT_FALSE(a.applied);
        EXPECT_EQ(a.error, "circuit breaker tripped");
    }
}

TEST(Apply, K8sIsHonestlyNotApplied) {
    RunReport r = cluster(10, 1);
    core::ActionsConfig cfg;
    cfg.targets = {"k8s"};
    plan_actions(r, cfg);
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    EXPECT_TRUE(runner.calls.empty());
    ASSERT_EQ(r.actions.size(), 1u);
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error, "kubernetes sink not configured: planned only");
}

TEST(Apply, UnknownTargetIsVisibleAndNeverRun) {
    RunReport r = cluster(10, 1);
    core::ActionsConfig cfg;
    cfg.targets = {"pagerduty"};
    plan_actions(r, cfg);
    ASSERT_EQ(r.actions.size(), 1u);
    EXPECT_NE(r.actions[0].error.find("pagerduty"), std::string::npos);
    FakeRunner runner;
    apply_actions(r, runner, std::chrono::milliseconds(1000));
    EXPECT_TRUE(runner.calls.empty());
    EXPECT_FALSE(r.actions[0].applied);
}

TEST(ExitCode, Mapping) {
    EXPECT_EQ(exit_code_for(cluster(8, 0)), 0);
    EXPECT_EQ(exit_code_for(cluster(8, 0, 1)), 4);
    EXPECT_EQ(exit_code_for(cluster(8, 1, 1)), 1);
    RunReport warn_only = cluster(8, 0);
    warn_only.nodes[0].verdict = Verdict::warn;
    warn_only.nodes[1].verdict = Verdict::skip;
    EXPECT_EQ(exit_code_for(warn_only), 5);  // warnings only: not 0
    RunReport tripped = cluster(8, 2);
    plan_actions(tripped, core::ActionsConfig{});
    EXPECT_EQ(exit_code_for(tripped), 3);
    EXPECT_EQ(exit_code_for(RunReport{}), 0);
}

}  // namespace
}  // namespace preflight::outcome
