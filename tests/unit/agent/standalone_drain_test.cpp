// The prolog's drain goes through the controller's drain path (outcome::apply_slurm_drain), with a
// fake scontrol at the seam serving the installed Slurm's saved `scontrol show node -o`: a fixed
// reason with the figures in Comment, an operator's drain left alone with its reason, and the
// circuit breaker refusing (exit 3) when the partition has too many of our drains already.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/saved_scontrol.hpp"

#include "agent/standalone.hpp"
#include "core/exit_code.hpp"
#include "integrations/slurm/slurm_standalone.hpp"

namespace preflight::agent {
namespace {

using preflight::testing::SavedScontrol;

std::string fixture(const std::string& name) {
    return preflight::testing::slurm_fixture(name);
}

std::string idle(const std::string& name) {
    return "NodeName=" + name + " Arch=x86_64 NodeAddr=127.0.0.1 State=IDLE Partitions=batch\n";
}

StandaloneOutcome failed_mtu() {
    StandaloneOutcome o;
    core::CheckResult r;
    r.check = "link.netdev";
    r.verdict = core::Verdict::fail;
    r.detail = "eth0: mtu 1500 != expected 9000";
    o.results = {r};
    judge_standalone(o, core::EvaluationConfig{}, {}, "");
    o.drain_comment = "preflight: link.netdev eth0: mtu 1500 != expected 9000 run=job 12";
    return o;
}

TEST(PrologDrain, FixedReasonAndFiguresInComment) {
    StandaloneOutcome o = failed_mtu();
    EXPECT_EQ(o.finding, outcome::FindingClass::config_mismatch);
    SavedScontrol scontrol(idle("node01") + idle("node02") + idle("node03"));
    StandaloneOptions options;
    core::ActionsConfig actions;
    EXPECT_EQ(drain_for_prolog(o, "node02", "job 12", options, actions, scontrol),
              outcome::DrainOutcome::drained);
    EXPECT_EQ(o.drain_outcome, "drained");
    ASSERT_EQ(scontrol.updates.size(), 1u);
    EXPECT_EQ(scontrol.updates[0],
              (std::vector<std::string>{
                  "scontrol", "update", "NodeName=node02", "State=DRAIN",
                  "Reason=preflight: config mismatch",
                  "Comment=preflight: link.netdev eth0: mtu 1500 != expected 9000 run=job 12"}));
}

// The outcome JSON names a finding class only when something was found: a pass carried
// "check_error" (the field's default) until seen on a GPU node (docs/gpu.md).
TEST(PrologOutcome, FindingOnlyWhenSomethingWasFound) {
    EXPECT_EQ(failed_mtu().to_json("node02").at("finding"), "config_mismatch");
    StandaloneOutcome passed;
    core::CheckResult r;
    r.check = "link.netdev";
    r.verdict = core::Verdict::pass;
    passed.results = {r};
    judge_standalone(passed, core::EvaluationConfig{}, {}, "");
    ASSERT_EQ(passed.verdict, core::Verdict::pass);
    EXPECT_FALSE(passed.to_json("node02").contains("finding"));
}

TEST(PrologDrain, AnOperatorsDrainKeepsItsReason) {
    StandaloneOutcome o = failed_mtu();
    SavedScontrol scontrol(fixture("show_node_o_owned_foreign_old.txt"));
    StandaloneOptions options;
    EXPECT_EQ(drain_for_prolog(o, "node02", "job 12", options, core::ActionsConfig{}, scontrol),
              outcome::DrainOutcome::left_alone);
    EXPECT_TRUE(scontrol.updates.empty());
    EXPECT_EQ(o.drain_outcome, "left_alone");
    EXPECT_NE(o.drain_error.find("bad dimm ticket 123"), std::string::npos) << o.drain_error;
}

TEST(PrologDrain, BreakerRefusesWithTheConfigsCapsAndTheFlagsOverrideThem) {
    // node01 and node03 are drained by us (one by an older version); node04 would be the third
    // of 4.
    const std::string listing = fixture("show_node_o_owned_foreign_old.txt") + idle("node04");
    StandaloneOptions options;
    core::ActionsConfig actions;  // max_action_fraction 0.10, min_actions 1: one of 4
    {
        StandaloneOutcome o = failed_mtu();
        SavedScontrol scontrol(listing);
        EXPECT_EQ(drain_for_prolog(o, "node04", "job 12", options, actions, scontrol),
                  outcome::DrainOutcome::refused);
        EXPECT_TRUE(scontrol.updates.empty());
        EXPECT_EQ(o.drain_outcome, "refused");
        EXPECT_NE(o.drain_error.find("3 of 4 nodes in the partition batch"), std::string::npos)
            << o.drain_error;
        EXPECT_EQ(standalone_exit_code(o.verdict, OnError::allow), 1);
        EXPECT_NE(termination_message("node04", o, 3).find("the circuit breaker refused"),
                  std::string::npos);
    }
    {
        actions.max_action_fraction = 1.0;  // the configuration allows it ...
        StandaloneOutcome o = failed_mtu();
        SavedScontrol scontrol(listing);
        EXPECT_EQ(drain_for_prolog(o, "node04", "job 12", options, actions, scontrol),
                  outcome::DrainOutcome::drained);
        options.max_actions = 2;  // ... the flag's absolute cap does not
        StandaloneOutcome o2 = failed_mtu();
        EXPECT_EQ(drain_for_prolog(o2, "node04", "job 12", options, actions, scontrol),
                  outcome::DrainOutcome::refused);
        options.force = true;  // --force: drained, logged as overridden
        StandaloneOutcome o3 = failed_mtu();
        EXPECT_EQ(drain_for_prolog(o3, "node04", "job 12", options, actions, scontrol),
                  outcome::DrainOutcome::drained);
        EXPECT_EQ(scontrol.updates.size(), 2u);
    }
}

}  // namespace
}  // namespace preflight::agent
