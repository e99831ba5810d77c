// Action sinks: apply_actions hands each action to the sink of its name, the plan-only sink never
// claims an action, and the drain and resume argv and the taint entry are exactly what Slurm and
// Kubernetes are given.
#include "outcome/sink.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../run_targets.hpp"

#include "integrations/k8s/k8s_action_sink.hpp"
#include "integrations/k8s/taint.hpp"
#include "integrations/slurm/scontrol_argv.hpp"
#include "integrations/slurm/slurm_action_sink.hpp"
#include "integrations/slurm/slurm_sink.hpp"
#include "outcome/actions.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::apply_actions;
using preflight::testing::plan_actions;

using core::Verdict;

// Records the actions handed to it and marks them applied.
class RecordingSink final : public ActionSink {
  public:
    explicit RecordingSink(std::string name) : m_name(std::move(name)) {}
    std::string_view name() const override { return m_name; }
    std::string_view kind() const override { return "record"; }
    void plan(Action&, const NodeReport&, const std::string&) const override {}
    void apply(const RunReport& /*report*/, Action& action) override {
        seen.push_back(action.node);
        action.applied = true;
    }
    std::vector<std::string> seen;

  private:
    std::string m_name;
};

// scontrol as a recorder: `show node` answers an idle node (or ten, without a name), everything
// else succeeds.
class RecordingRunner final : public core::CommandRunner {
  public:
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions& /*options*/) override {
        if (argv.size() >= 5 && argv[1] == "show") {
            return core::ProcessResult{
                0, 0, false, "NodeName=" + argv[4] + " NodeAddr=10.0.0.1 State=" + state + reason};
        }
        if (argv.size() == 4 && argv[1] == "show") {  // the breaker's count: a cluster of 10
            std::string out;
            for (int i = 0; i < 10; ++i) {
                out += "NodeName=gpu0" + std::to_string(i) + " NodeAddr=10.0.0.1 State=IDLE\n";
            }
            return core::ProcessResult{0, 0, false, out};
        }
        calls.push_back(argv);
        return core::ProcessResult{0, 0, false, ""};
    }
    std::string state = "IDLE";
    std::string reason;
    std::vector<std::vector<std::string>> calls;
};

Action action(const std::string& node, const std::string& sink) {
    Action a;
    a.node = node;
    a.sink = sink;
    a.kind = sink == "slurm" ? "drain" : "taint";
    return a;
}

TEST(ActionSink, EachActionGoesToTheSinkOfItsName) {
    RunReport r;
    r.actions = {action("a", "slurm"), action("b", "k8s"), action("c", "slurm")};
    RecordingSink slurm("slurm");
    RecordingSink k8s("k8s");
    ActionSink* const sinks[] = {&k8s, &slurm};
    apply_actions(r, sinks);
    EXPECT_EQ(slurm.seen, (std::vector<std::string>{"a", "c"}));
    EXPECT_EQ(k8s.seen, (std::vector<std::string>{"b"}));
    for (const auto& a : r.actions) {
        EXPECT_TRUE(a.applied) << a.node;
    }
    // Applied actions are not handed over again.
    apply_actions(r, sinks);
    EXPECT_EQ(slurm.seen.size(), 2u);
}

TEST(ActionSink, NoSinkOfThatNameIsAnError) {
    RunReport r;
    r.actions = {action("a", "pagerduty")};
    RecordingSink slurm("slurm");
    ActionSink* const sinks[] = {&slurm};
    apply_actions(r, sinks);
    EXPECT_TRUE(slurm.seen.empty());
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error, "no sink for 'pagerduty'");
}

TEST(ActionSink, TrippedBreakerHandsNothingOver) {
    RunReport r;
    r.actions = {action("a", "slurm")};
    r.breaker.tripped = true;
    RecordingSink slurm("slurm");
    ActionSink* const sinks[] = {&slurm};
    apply_actions(r, sinks);
    EXPECT_TRUE(slurm.seen.empty());
    r.breaker.forced = true;
    apply_actions(r, sinks);
    EXPECT_EQ(slurm.seen, (std::vector<std::string>{"a"}));
}

TEST(ActionSink, PlanOnlyRecordsWhyAndNeverClaimsSuccess) {
    RunReport r;
    r.actions = {action("a", "k8s")};
    PlanOnlySink plan("k8s", "taint", "planned only: no cluster");
    EXPECT_EQ(plan.name(), "k8s");
    ActionSink* const sinks[] = {&plan};
    apply_actions(r, sinks);
    EXPECT_FALSE(r.actions[0].applied);
    EXPECT_EQ(r.actions[0].error, "planned only: no cluster");
}

TEST(ActionSink, K8sSinkCallsItsFunction) {
    RunReport r;
    r.actions = {action("a", "k8s")};
    int calls = 0;
    K8sSink k8s([&calls](const RunReport&, Action& a) {
        ++calls;
        a.applied = true;
    });
    ActionSink* const sinks[] = {&k8s};
    apply_actions(r, sinks);
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(r.actions[0].applied);
}

TEST(ActionSink, SlurmSinkRunsThePlannedArgv) {
    RunReport r;
    Action a = action("gpu07", "slurm");
    a.argv = slurm_drain_argv("/opt/slurm/bin/scontrol", "gpu07", "preflight: slow");
    r.actions = {a};
    RecordingRunner runner;
    SlurmSink slurm(runner, "scontrol", std::chrono::seconds(1));
    EXPECT_EQ(slurm.name(), "slurm");
    ActionSink* const sinks[] = {&slurm};
    apply_actions(r, sinks);
    ASSERT_EQ(runner.calls.size(), 1u);
    EXPECT_EQ(runner.calls[0], a.argv);
    EXPECT_TRUE(r.actions[0].applied) << r.actions[0].error;
}

TEST(ActionCommands, DrainAndResumeArgvExact) {
    EXPECT_EQ(slurm_drain_argv("scontrol", "gpu01", "preflight: x y"),
              (std::vector<std::string>{"scontrol", "update", "NodeName=gpu01", "State=DRAIN",
                                        "Reason=preflight: x y"}));
    EXPECT_EQ(slurm_resume_argv("/usr/bin/scontrol", "gpu01"),
              (std::vector<std::string>{"/usr/bin/scontrol", "update", "NodeName=gpu01",
                                        "State=RESUME"}));
}

TEST(ActionCommands, SlurmClientDrainsAndResumesWithTheSameArgv) {
    RecordingRunner runner;
    SlurmClient client{runner, "sc", std::chrono::seconds(1)};
    ASSERT_TRUE(client.drain("n1", "preflight: slow").ok());
    runner.state = "IDLE+DRAIN";
    runner.reason = " Reason=preflight: slow [root@2026-01-01T00:00:00]";
    std::string why;
    EXPECT_TRUE(client.resume_if_ours("n1", &why)) << why;
    ASSERT_EQ(runner.calls.size(), 2u);
    EXPECT_EQ(runner.calls[0], slurm_drain_argv("sc", "n1", "preflight: slow"));
    EXPECT_EQ(runner.calls[1], slurm_resume_argv("sc", "n1"));
}

TEST(ActionCommands, DegradedTaintEntry) {
    EXPECT_EQ(degraded_taint("collective.gloo_allreduce"),
              nlohmann::json::parse(R"({"key":"preflight.dev/degraded",
                                        "value":"collective.gloo_allreduce",
                                        "effect":"NoSchedule"})"));
    EXPECT_EQ(degraded_taint("")["value"], "unknown");
}

TEST(Tally, CountsNodesByVerdict) {
    RunReport r;
    for (Verdict v : {Verdict::pass, Verdict::pass, Verdict::warn, Verdict::fail, Verdict::skip,
                      Verdict::error, Verdict::error, Verdict::error}) {
        NodeReport n;
        n.verdict = v;
        r.nodes.push_back(n);
    }
    const VerdictTally t = tally(r);
    EXPECT_EQ(t.pass, 2);
    EXPECT_EQ(t.warn, 1);
    EXPECT_EQ(t.fail, 1);
    EXPECT_EQ(t.skip, 1);
    EXPECT_EQ(t.error, 3);
    EXPECT_EQ(t.total(), 8);
    EXPECT_EQ(t.of(Verdict::error), 3);
    EXPECT_EQ(t.of(Verdict::pass), 2);
    EXPECT_EQ(tally(RunReport{}).total(), 0);
}

}  // namespace
}  // namespace preflight::outcome
