// The planner's rounds driven against a simulated fabric: each node has a link rate, a group runs
// at its slowest member's rate, and chosen agents can be lost. No sockets; the StepRunner seam.
#include "controller/run/group_rounds.hpp"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using namespace preflight::controller;
using preflight::core::Verdict;

struct SimFabric {
    std::map<std::string, double> rate;                    // node -> GB/s
    std::set<std::string> lost;                            // agents that die on their first step
    std::function<double(const std::string&, int)> flaky;  // optional (node, call) -> rate
    std::vector<std::vector<std::string>> batches;         // groups seen, per call
    int calls = 0;

    StepRunner runner() {
        return
            [this](const std::vector<StepRequest>& requests, std::chrono::steady_clock::time_point,
                   const std::function<void(std::size_t, std::size_t)>&) {
                ++calls;
                std::vector<StepOutcome> out;
                for (const auto& req : requests) {
                    StepOutcome o;
                    o.node = req.node;
                    o.result.check = req.check;
                    bool group_lost = false;
                    double slowest = 1e9;
                    for (const auto& m : req.group->members) {
                        group_lost = group_lost || lost.count(m) != 0;
                        double r = flaky ? flaky(m, calls) : rate.at(m);
                        slowest = std::min(slowest, r);
                    }
                    if (lost.count(req.node) != 0) {
                        o.lost = true;
                        o.result.verdict = Verdict::error;
                        o.result.detail = "agent lost: killed";
                    } else if (group_lost) {
                        o.result.verdict = Verdict::error;
                        o.result.detail = "peer closed the connection";
                    } else {
                        o.result.verdict = Verdict::pass;
                        o.result.metrics["busbw_gbps"] = slowest;
                    }
                    out.push_back(o);
                }
                return out;
            };
    }
};

GroupCheckPlan plan() {
    GroupCheckPlan p;
    p.check = "collective.gloo_allreduce";
    p.params = nlohmann::json::object();
    p.step_deadline_s = 10;
    p.controller_slack_s = 1;
    p.threshold_fraction = 0.9;
    return p;
}

std::vector<std::string> names(int n) {
    std::vector<std::string> out;
    for (int i = 1; i <= n; ++i) {
        out.push_back("h" + std::to_string(i));
    }
    return out;
}

CohortOf one_cohort() {
    return [](const std::string&) { return std::string("sku"); };
}

GroupCheckOutcome run(SimFabric& fabric, const std::vector<std::string>& nodes) {
    return run_group_check(fabric.runner(), plan(), nodes, one_cohort(), {});
}

std::set<int> rounds_used(const GroupCheckOutcome& o) {
    std::set<int> r;
    for (const auto& g : o.groups) {
        r.insert(g.round);
    }
    return r;
}

TEST(GroupRounds, OneSlowNodeIsConfirmedInThreeRounds) {
    SimFabric f;
    for (const auto& n : names(8)) {
        f.rate[n] = n == "h3" ? 0.024 : 0.048;
    }
    auto o = run(f, names(8));
    EXPECT_EQ(rounds_used(o), (std::set<int>{1, 2, 3}));
    EXPECT_EQ(o.groups.size(), 4u + 2u + 1u);               // pairs, two re-pairs, one confirmation
    EXPECT_EQ(o.per_node.at("h3").verdict, Verdict::pass);  // the evaluator judges the figure
    EXPECT_DOUBLE_EQ(o.per_node.at("h3").metrics.at("busbw_gbps"), 0.024);
    EXPECT_DOUBLE_EQ(o.per_node.at("h4").metrics.at("busbw_gbps"), 0.048);  // cleared by re-pair
    for (const auto& n : names(8)) {
        EXPECT_EQ(o.per_node.at(n).verdict, Verdict::pass) << n;
    }
    // h3 met three different partners.
    std::set<std::string> partners;
    for (const auto& g : o.groups) {
        if (std::find(g.members.begin(), g.members.end(), "h3") != g.members.end()) {
            for (const auto& m : g.members) {
                partners.insert(m);
            }
        }
    }
    EXPECT_EQ(partners.size(), 4u);
}

TEST(GroupRounds, TwoSlowNodesPairedTogetherAreBothConfirmed) {
    SimFabric f;
    for (const auto& n : names(6)) {
        f.rate[n] = (n == "h1" || n == "h2") ? 0.024 : 0.048;
    }
    auto o = run(f, names(6));
    EXPECT_EQ(o.groups.front().members, (std::vector<std::string>{"h1", "h2"}));
    EXPECT_TRUE(o.groups.front().slow);
    EXPECT_DOUBLE_EQ(o.per_node.at("h1").metrics.at("busbw_gbps"), 0.024);
    EXPECT_DOUBLE_EQ(o.per_node.at("h2").metrics.at("busbw_gbps"), 0.024);
    EXPECT_EQ(rounds_used(o), (std::set<int>{1, 2, 3}));
}

TEST(GroupRounds, HealthyFabricNeedsOnlyRoundOne) {
    SimFabric f;
    for (const auto& n : names(8)) {
        f.rate[n] = 0.048;
    }
    auto o = run(f, names(8));
    EXPECT_EQ(rounds_used(o), (std::set<int>{1}));
    EXPECT_EQ(f.calls, 1);
}

TEST(GroupRounds, OddCountPutsEveryNodeInAGroup) {
    SimFabric f;
    for (const auto& n : names(5)) {
        f.rate[n] = 0.048;
    }
    auto o = run(f, names(5));
    for (const auto& n : names(5)) {
        EXPECT_TRUE(o.per_node.at(n).metrics.count("busbw_gbps")) << n;
    }
    // Four in round-1 pairs; the fifth waits for round 2 and a partner that passed (a group of
    // three would be most of a five-node cohort's figures).
    ASSERT_EQ(o.groups.size(), 3u);
    EXPECT_EQ(o.groups[2].round, 2);
    EXPECT_THAT(o.groups[2].members, ::testing::ElementsAre("h5", ::testing::_));
}

// A slow node in a cohort of five is found: with a group of three in round 1 it would have made
// three of the five figures slow, and the cohort median with them.
TEST(GroupRounds, SlowNodeInACohortOfFiveIsConfirmed) {
    SimFabric f;
    for (const auto& n : names(5)) {
        f.rate[n] = 100.0;
    }
    f.rate["h5"] = 40.0;
    auto o = run(f, names(5));
    EXPECT_LT(o.per_node.at("h5").metrics.at("busbw_gbps"), 50.0);
    EXPECT_EQ(o.per_node.at("h5").verdict, Verdict::pass) << o.per_node.at("h5").detail;
    for (const auto& n : {"h1", "h2", "h3", "h4"}) {
        EXPECT_EQ(o.per_node.at(n).metrics.at("busbw_gbps"), 100.0) << n;
    }
}

TEST(GroupRounds, SingleNodeIsIncompleteNeverAPass) {
    SimFabric f;
    f.rate["h1"] = 0.048;
    auto o = run(f, {"h1"});
    EXPECT_EQ(o.per_node.at("h1").verdict, Verdict::warn);
    EXPECT_EQ(o.per_node.at("h1").undecided, preflight::core::Undecided::incomplete);
    EXPECT_THAT(o.per_node.at("h1").detail, ::testing::HasSubstr("--reference-nodes"));
    EXPECT_THAT(o.per_node.at("h1").detail, ::testing::HasSubstr("no partner"));
    EXPECT_EQ(f.calls, 0);
}

TEST(GroupRounds, PartnerOfALostAgentIsRemeasuredWithAGoodNode) {
    SimFabric f;
    for (const auto& n : names(4)) {
        f.rate[n] = 0.048;
    }
    f.lost = {"h2"};
    auto o = run(f, names(4));
    EXPECT_EQ(o.per_node.at("h2").verdict, Verdict::error);
    EXPECT_EQ(o.per_node.at("h1").verdict, Verdict::pass) << o.per_node.at("h1").detail;
    EXPECT_DOUBLE_EQ(o.per_node.at("h1").metrics.at("busbw_gbps"), 0.048);
}

TEST(GroupRounds, SuspectWhoseRepairingFailsIsUnconfirmedError) {
    SimFabric f;
    for (const auto& n : names(4)) {
        f.rate[n] = 0.048;
    }
    f.rate["h1"] = 0.024;  // h1+h2 slow in round 1
    // h2's re-pairing partner dies on its first step, so h2 is never cleared or confirmed.
    f.flaky = [&](const std::string& n, int) { return f.rate.at(n); };
    bool killed = false;
    auto base = f.runner();
    StepRunner runner = [&](const std::vector<StepRequest>& reqs, auto deadline, const auto& p) {
        if (f.calls == 1 && !killed) {  // round 2: lose whoever was paired with h2
            for (const auto& r : reqs) {
                if (r.node != "h2" && std::find(r.group->members.begin(), r.group->members.end(),
                                                "h2") != r.group->members.end()) {
                    f.lost.insert(r.node);
                    killed = true;
                }
            }
        }
        return base(reqs, deadline, p);
    };
    auto o = run_group_check(runner, plan(), names(4), one_cohort(), {});
    ASSERT_TRUE(killed);
    EXPECT_EQ(o.per_node.at("h2").verdict, Verdict::error);
    EXPECT_THAT(o.per_node.at("h2").detail, ::testing::HasSubstr("unconfirmed suspect"));
}

TEST(GroupRounds, SlowThenNormalIsInconsistentWarn) {
    SimFabric f;
    for (const auto& n : names(6)) {
        f.rate[n] = 0.048;
    }
    // h1 is slow in rounds 1 and 2, then recovers for the confirmation.
    f.flaky = [&](const std::string& n, int call) {
        return (n == "h1" && call <= 2) ? 0.024 : f.rate.at(n);
    };
    auto o = run(f, names(6));
    EXPECT_EQ(rounds_used(o), (std::set<int>{1, 2, 3}));
    EXPECT_EQ(o.per_node.at("h1").verdict, Verdict::warn);
    EXPECT_THAT(o.per_node.at("h1").detail, ::testing::HasSubstr("inconsistent"));
}

TEST(GroupRounds, NeverAllPairs) {
    for (int n : {16, 64, 256}) {
        SimFabric f;
        for (const auto& name : names(n)) {
            f.rate[name] = 0.048;
        }
        f.rate["h2"] = f.rate["h7"] = f.rate["h9"] = 0.02;
        auto o = run(f, names(n));
        EXPECT_LE(rounds_used(o).size(), 3u);
        // n/2 pairs, at most two re-pairs per slow pair member, one confirmation per suspect.
        EXPECT_LE(o.groups.size(), static_cast<std::size_t>(n / 2 + 6 + 3)) << n;
        for (const auto& bad : {"h2", "h7", "h9"}) {
            EXPECT_DOUBLE_EQ(o.per_node.at(bad).metrics.at("busbw_gbps"), 0.02) << bad;
        }
    }
}

}  // namespace

// A group check whose prerequisite is absent everywhere (no GPU) skips on every node: the nodes'
// result is `skip` with the check's reason, not `error`, so the other checks decide the verdict.
TEST(GroupRounds, CheckThatSkipsEverywhereIsSkipNotError) {
    StepRunner runner = [](const std::vector<StepRequest>& requests,
                           std::chrono::steady_clock::time_point,
                           const std::function<void(std::size_t, std::size_t)>&) {
        std::vector<StepOutcome> out;
        for (const auto& req : requests) {
            StepOutcome o;
            o.node = req.node;
            o.result.check = req.check;
            o.result.verdict = Verdict::skip;
            o.result.detail = "no usable GPU: cudaGetDeviceCount: cudaErrorInsufficientDriver";
            out.push_back(o);
        }
        return out;
    };
    auto outcome = run_group_check(runner, plan(), names(4), one_cohort(), {});
    ASSERT_EQ(outcome.per_node.size(), 4u);
    for (const auto& [node, result] : outcome.per_node) {
        EXPECT_EQ(result.verdict, Verdict::skip) << node;
        EXPECT_EQ(result.detail, "no usable GPU: cudaGetDeviceCount: cudaErrorInsufficientDriver");
    }
}

// One node that skips (no GPU) does not turn its partner, whose step errored, into a skip.
TEST(GroupRounds, OnlyTheSkippingNodeIsSkip) {
    StepRunner runner = [](const std::vector<StepRequest>& requests,
                           std::chrono::steady_clock::time_point,
                           const std::function<void(std::size_t, std::size_t)>&) {
        std::vector<StepOutcome> out;
        for (const auto& req : requests) {
            StepOutcome o;
            o.node = req.node;
            o.result.check = req.check;
            const auto& m = req.group->members;
            if (req.node == "h1") {
                o.result.verdict = Verdict::skip;
                o.result.detail = "no usable GPU";
            } else if (std::find(m.begin(), m.end(), "h1") != m.end()) {
                o.result.verdict = Verdict::error;
                o.result.detail = "rendezvous: kv_get timed out";
            } else {
                o.result.verdict = Verdict::pass;
                o.result.metrics["busbw_gbps"] = 10.0;
            }
            out.push_back(o);
        }
        return out;
    };
    auto outcome = run_group_check(runner, plan(), names(4), one_cohort(), {});
    EXPECT_EQ(outcome.per_node.at("h1").verdict, Verdict::skip);
    for (const auto& node : {"h2", "h3", "h4"}) {
        EXPECT_NE(outcome.per_node.at(node).verdict, Verdict::skip) << node;
    }
}
