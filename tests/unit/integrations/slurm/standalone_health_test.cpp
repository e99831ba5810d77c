// The health profile (HealthCheckProgram) against a fake scontrol that keeps node state: a failure
// drains with our reason once, passes resume only the drain this health check made and only after
// --resume-after of them in a row, the node read again right before the resume; someone else's
// drain and other preflight drains are never resumed; a check that could not judge resets the
// count; a corrupt or foreign state file restarts the count and never resumes; one run per node
// at a time. Against real slurmd health checks: tests/integration/slurm_health_test.cpp.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "integrations/slurm/standalone_health.hpp"
#include "tests/unit/saved_scontrol.hpp"

namespace preflight::agent {
namespace {

// scontrol with state: `show node -o [NAME]` lists the nodes, `update NodeName=N State=DRAIN
// Reason=R [Comment=C]` and `State=RESUME [Comment=]` change them.
class FakeSlurm final : public core::CommandRunner {
  public:
    struct Node {
        std::string state = "IDLE";
        std::string reason;
        std::string comment;
    };
    std::map<std::string, Node> nodes{
        {"node01", {}}, {"node02", {}}, {"node03", {}}, {"node04", {}}};
    std::vector<std::vector<std::string>> updates;

    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions& /*options*/) override {
        if (argv.size() >= 4 && argv[1] == "show") {
            std::string out;
            for (const auto& [name, n] : nodes) {
                if (argv.size() == 4 || argv[4] == name) {
                    out += "NodeName=" + name + " Arch=x86_64 State=" + n.state +
                           " Partitions=batch" +
                           (n.reason.empty() ? "" : " Reason=" + n.reason + " [root@2026-01-01]") +
                           (n.comment.empty() ? "" : " Comment=" + n.comment) + "\n";
                }
            }
            return core::ProcessResult{out.empty() ? 1 : 0, 0, false, out};
        }
        updates.push_back(argv);
        std::map<std::string, std::string> kv;
        for (const auto& a : argv) {
            if (auto eq = a.find('='); eq != std::string::npos) {
                kv[a.substr(0, eq)] = a.substr(eq + 1);
            }
        }
        Node& n = nodes.at(kv.at("NodeName"));
        if (kv["State"] == "DRAIN") {
            n.state = "IDLE+DRAIN";
            n.reason = kv["Reason"];
        } else if (kv["State"] == "RESUME") {
            n.state = "IDLE";
            n.reason.clear();
        }
        if (kv.count("Comment") != 0) {
            n.comment = kv["Comment"];
        }
        return core::ProcessResult{0, 0, false, ""};
    }
};

class Health : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("pf-health-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(m_dir);
        options.state_dir = m_dir.string();
        options.drain = true;
        options.resume_after = 3;
        actions.max_action_fraction = 0.5;
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    // One health run of node02 with this verdict; returns the exit code.
    int run(core::Verdict verdict, const std::string& node = "node02") {
        StandaloneOutcome o;
        core::CheckResult r;
        r.check = "link.netdev";
        r.verdict = verdict;
        r.detail = verdict == core::Verdict::fail ? "eth0: mtu 1400 != expected 1500" : "";
        o.results = {r};
        judge_standalone(o, core::EvaluationConfig{}, {}, "");
        const int rc = apply_health(o, node, true, options, actions, slurm);
        last = o;
        return rc;
    }
    HealthState state(const std::string& node = "node02") {
        std::ifstream in(health_state_path(options.state_dir, node));
        std::stringstream ss;
        ss << in.rdbuf();
        auto st = parse_health_state(ss.str(), node);
        EXPECT_TRUE(st) << ss.str();
        return st ? st.value() : HealthState{};
    }
    std::string action() const { return last.health.value("action", std::string()); }

    std::filesystem::path m_dir;
    StandaloneOptions options;
    core::ActionsConfig actions;
    FakeSlurm slurm;
    StandaloneOutcome last;
};

TEST_F(Health, DrainsOnceAndResumesItsOwnDrainOnlyAfterNConsecutivePasses) {
    EXPECT_EQ(run(core::Verdict::fail), 1);
    EXPECT_EQ(action(), "drained");
    EXPECT_EQ(slurm.nodes["node02"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.nodes["node02"].reason, "preflight: config mismatch");
    EXPECT_EQ(slurm.nodes["node02"].comment,
              "preflight: link.netdev eth0: mtu 1400 != expected 1500 run=health");
    EXPECT_EQ(state().drained_reason, "preflight: config mismatch");

    // Still failing: no new update every interval.
    EXPECT_EQ(run(core::Verdict::fail), 1);
    EXPECT_EQ(action(), "already_drained");
    EXPECT_EQ(slurm.updates.size(), 1u);

    for (int pass = 1; pass <= 2; ++pass) {
        EXPECT_EQ(run(core::Verdict::pass), 0);
        EXPECT_EQ(action(), "waiting") << last.health.dump();
        EXPECT_EQ(state().consecutive_passes, pass);
        EXPECT_EQ(slurm.nodes["node02"].state, "IDLE+DRAIN");
    }
    EXPECT_EQ(run(core::Verdict::warn), 0);  // warnings decide nothing: a pass
    EXPECT_EQ(action(), "resumed") << last.health.dump();
    EXPECT_EQ(slurm.nodes["node02"].state, "IDLE");
    EXPECT_EQ(slurm.nodes["node02"].comment, "");  // ours: cleared with the resume
    ASSERT_EQ(slurm.updates.size(), 2u);
    EXPECT_EQ(slurm.updates[1], (std::vector<std::string>{"scontrol", "update", "NodeName=node02",
                                                          "State=RESUME", "Comment="}));
    EXPECT_EQ(state().drained_reason, "");
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(action(), "none");
    EXPECT_EQ(slurm.updates.size(), 2u);
}

TEST_F(Health, ACheckThatCouldNotJudgeResetsTheCountAndNeitherDrainsNorResumes) {
    EXPECT_EQ(run(core::Verdict::fail), 1);
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(run(core::Verdict::error), 0);
    EXPECT_EQ(state().consecutive_passes, 0);
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(action(), "waiting");
    EXPECT_EQ(slurm.nodes["node02"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.updates.size(), 1u);

    // Interrupted (slurmd's kill): the same.
    StandaloneOutcome o;
    o.verdict = core::Verdict::error;
    EXPECT_EQ(apply_health(o, "node02", false, options, actions, slurm), 0);
    EXPECT_EQ(state().consecutive_passes, 0);
    EXPECT_EQ(state().last_verdict, "interrupted");

    // A healthy node that cannot be judged is not drained either.
    EXPECT_EQ(run(core::Verdict::error, "node01"), 0);
    EXPECT_EQ(slurm.nodes["node01"].state, "IDLE");
}

TEST_F(Health, SomeoneElsesDrainAndOtherPreflightDrainsAreNeverResumed) {
    slurm.nodes["node03"] = {"IDLE+DRAIN", "RMA 1234", "asset 77"};
    slurm.nodes["node04"] = {"IDLE+DRAIN", "preflight: busbw low", "preflight: run=r1"};
    for (const char* node : {"node03", "node04"}) {
        EXPECT_EQ(run(core::Verdict::fail, node), 1);
        EXPECT_EQ(action(), "left_alone") << node << last.health.dump();
        for (int i = 0; i < 5; ++i) {
            EXPECT_EQ(run(core::Verdict::pass, node), 0);
            EXPECT_EQ(action(), "none") << node;
        }
    }
    EXPECT_TRUE(slurm.updates.empty());
    EXPECT_EQ(slurm.nodes["node03"].reason, "RMA 1234");
    EXPECT_EQ(slurm.nodes["node04"].reason, "preflight: busbw low");
}

// Slurm 24.11 keeps an operator's old Reason on a node they resumed (State=IDLE; the real `scontrol
// show node -o` of tests/fixtures/slurm/24.11). A health check that finds that node failing drains
// it: the old reason marks nothing, and left in service the node would take the next job.
TEST_F(Health, AFailingNodeWithAnOldReasonKeptAfterAResumeIsDrained) {
    preflight::testing::SavedScontrol saved(
        preflight::testing::slurm_fixture("24.11/show_node_o_owned_foreign_resumed.txt"));
    StandaloneOutcome o;
    core::CheckResult r;
    r.check = "link.netdev";
    r.verdict = core::Verdict::fail;
    r.detail = "eth0: mtu 1400 != expected 1500";
    o.results = {r};
    judge_standalone(o, core::EvaluationConfig{}, {}, "");
    EXPECT_EQ(apply_health(o, "node02", true, options, actions, saved), 1);
    EXPECT_EQ(o.health.value("action", std::string()), "drained") << o.health.dump();
    ASSERT_EQ(saved.updates.size(), 1u);
    // Drained with our reason; the operator's Comment (asset tag 7781) is kept.
    EXPECT_EQ(saved.updates[0],
              (std::vector<std::string>{"scontrol", "update", "NodeName=node02", "State=DRAIN",
                                        "Reason=preflight: config mismatch"}));
    EXPECT_EQ(state().drained_reason, "preflight: config mismatch");
}

TEST_F(Health, TheNodeIsReadAgainRightBeforeTheResume) {
    EXPECT_EQ(run(core::Verdict::fail), 1);
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(run(core::Verdict::pass), 0);
    // Between two passes an operator takes the node over for an RMA.
    slurm.nodes["node02"].reason = "RMA 1234";
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(action(), "not_ours") << last.health.dump();
    EXPECT_NE(last.health.value("detail", std::string()).find("'RMA 1234'"), std::string::npos);
    EXPECT_EQ(slurm.updates.size(), 1u);
    EXPECT_EQ(state().drained_reason, "");  // never ours again
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(run(core::Verdict::pass), 0);
    }
    EXPECT_EQ(slurm.nodes["node02"].reason, "RMA 1234");
    EXPECT_EQ(slurm.updates.size(), 1u);

    // Resumed by hand meanwhile: nothing to do, the record is dropped.
    slurm.nodes["node01"] = {};
    EXPECT_EQ(run(core::Verdict::fail, "node01"), 1);
    slurm.nodes["node01"] = {};
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(run(core::Verdict::pass, "node01"), 0);
    }
    EXPECT_EQ(action(), "not_ours");
    EXPECT_EQ(slurm.updates.size(), 2u);
}

TEST_F(Health, ACorruptOrForeignStateFileRestartsTheCountAndNeverResumes) {
    EXPECT_EQ(run(core::Verdict::fail), 1);
    const std::string path = health_state_path(options.state_dir, "node02");
    for (const std::string& bad :
         {std::string("{not json"), std::string("[]"),
          std::string(
              R"({"kind": "preflight health state", "node": "node07",)"
              R"( "consecutive_passes": 2, "drained_reason": "preflight: config mismatch"})"),
          std::string(R"({"kind": "preflight health state", "node": "node02",)"
                      R"( "consecutive_passes": -1})"),
          std::string(R"({"kind": "preflight health state", "node": "node02",)"
                      R"( "consecutive_passes": 5, "drained_reason": "RMA 1234"})")}) {
        std::ofstream(path) << bad;
        EXPECT_EQ(run(core::Verdict::pass), 0);
        EXPECT_EQ(state().consecutive_passes, 1) << bad;
        EXPECT_TRUE(last.health.contains("state_note")) << bad;
    }
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(run(core::Verdict::pass), 0);
    }
    EXPECT_EQ(slurm.nodes["node02"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.updates.size(), 1u);
}

TEST_F(Health, StateRoundTripsAndOneRunPerNodeHoldsTheLock) {
    HealthState st;
    st.consecutive_passes = 2;
    st.drained_reason = "preflight: link down";
    auto back = parse_health_state(health_state_text(st, "node02", 3), "node02");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->consecutive_passes, 2);
    EXPECT_EQ(back->drained_reason, "preflight: link down");
    EXPECT_FALSE(parse_health_state(health_state_text(st, "node02", 3), "node03"));

    auto first = lock_health_state(options.state_dir, "node02");
    ASSERT_TRUE(first) << first.error().message;
    auto second = lock_health_state(options.state_dir, "node02");
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().message, "busy");
    EXPECT_TRUE(lock_health_state(options.state_dir, "node03"));
    first.value().reset();
    EXPECT_TRUE(lock_health_state(options.state_dir, "node02"));
}

TEST_F(Health, AStateFileThatIsASymlinkIsNeitherReadNorWrittenThrough) {
    std::filesystem::create_directories(m_dir);
    const std::string target = (m_dir / "elsewhere.json").string();
    HealthState planted;
    planted.consecutive_passes = 99;
    planted.drained_reason = "preflight: config mismatch";
    std::ofstream(target) << health_state_text(planted, "node02", 3);
    std::filesystem::create_symlink(target, health_state_path(options.state_dir, "node02"));
    slurm.nodes["node02"] = {"IDLE+DRAIN", "preflight: config mismatch", ""};
    EXPECT_EQ(run(core::Verdict::pass), 0);
    EXPECT_EQ(action(), "none");  // the planted drain record was not believed
    EXPECT_NE(last.health.value("state_note", std::string()).find("symbolic link"),
              std::string::npos);
    EXPECT_TRUE(slurm.updates.empty());
    std::ifstream in(target);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), health_state_text(planted, "node02", 3));  // not written through
}

TEST_F(Health, WithoutDrainItOnlyCountsAndSaysWhatItWouldDo) {
    options.drain = false;
    EXPECT_EQ(run(core::Verdict::fail), 1);
    EXPECT_EQ(action(), "would_drain");
    EXPECT_TRUE(slurm.updates.empty());
}

}  // namespace
}  // namespace preflight::agent
