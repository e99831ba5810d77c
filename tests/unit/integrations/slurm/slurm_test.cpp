// Unit tests of the Slurm pieces at their seams: scontrol output parsing, the certification flow
// against a fake scontrol (the real one is in tests/integration), and the standalone prolog's
// judgement. The srun steps: slurm_step_test.cpp.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/standalone.hpp"
#include "core/hostlist.hpp"
#include "integrations/slurm/certify.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::controller {
namespace {

using ::testing::HasSubstr;

TEST(ScontrolNodes, ParsesStateAddressAndReasonWithSpaces) {
    const std::string text =
        "NodeName=node01 Arch=x86_64 NodeAddr=10.0.0.1 NodeHostName=localhost OS=Linux 6.1 #1 SMP "
        "State=IDLE ThreadsPerCore=1 Partitions=batch\n"
        "NodeName=node02 Arch=x86_64 NodeAddr=10.0.0.2 State=IDLE+DRAIN+NOT_RESPONDING "
        "Partitions=batch Reason=operator: Foo=bar [x] | y [root@2026-11-22T03:04:37]\n"
        "Node nodeXX not found\n";
    auto nodes = outcome::parse_scontrol_nodes(text);
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].name, "node01");
    EXPECT_EQ(nodes[0].addr, "10.0.0.1");
    EXPECT_EQ(nodes[0].state, "IDLE");
    EXPECT_FALSE(nodes[0].drained());
    EXPECT_EQ(nodes[0].reason, "");
    EXPECT_TRUE(nodes[1].drained());
    EXPECT_TRUE(nodes[1].has_flag("NOT_RESPONDING"));
    EXPECT_FALSE(nodes[1].has_flag("RESPONDING"));
    EXPECT_EQ(nodes[1].reason, "operator: Foo=bar [x] | y");
    EXPECT_FALSE(outcome::reason_is_ours(nodes[1].reason));
    EXPECT_TRUE(outcome::reason_is_ours("preflight: uncertified"));
    EXPECT_FALSE(outcome::reason_is_ours(" preflight: x"));
}

// scontrol as a state machine: show node, update State=DRAIN|RESUME, create/delete reservation.
class FakeScontrol : public core::CommandRunner {
  public:
    struct NodeState {
        std::string state = "IDLE";
        std::string reason;
    };
    std::map<std::string, NodeState> nodes;
    std::vector<std::string> reservations;
    std::vector<std::vector<std::string>> calls;
    bool refuse_reservation = false;

    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        calls.push_back(argv);
        core::ProcessResult ok{0, 0, false, ""};
        if (argv.size() >= 5 && argv[1] == "show" && argv[2] == "node") {
            auto names = core::expand_hostlist(argv[4]);
            for (const auto& n : names.value()) {
                auto it = nodes.find(n);
                if (it == nodes.end()) {
                    ok.exit_code = 1;
                    ok.output += "Node " + n + " not found\n";
                    continue;
                }
                ok.output += "NodeName=" + n + " NodeAddr=10.0.0.9 State=" + it->second.state +
                             " Partitions=batch" +
                             (it->second.reason.empty() ? ""
                                                        : " Reason=" + it->second.reason +
                                                              " [root@2026-01-01T00:00:00]") +
                             "\n";
            }
            return ok;
        }
        if (argv.size() >= 4 && argv[1] == "update") {
            const std::string node = argv[2].substr(9);  // NodeName=
            if (argv[3] == "State=DRAIN") {
                nodes[node] = {"IDLE+DRAIN", argv[4].substr(7)};
            } else if (argv[3] == "State=RESUME") {
                nodes[node] = {"IDLE", ""};
            }
            return ok;
        }
        if (argv.size() >= 3 && argv[1] == "create" && argv[2] == "reservation") {
            if (refuse_reservation) {
                return core::ProcessResult{1, 0, false, "Error creating the reservation: busy\n"};
            }
            reservations.push_back(argv[3].substr(16));
            return ok;
        }
        if (argv.size() >= 3 && argv[1] == "delete") {
            auto name = argv[2].substr(16);
            reservations.erase(std::remove(reservations.begin(), reservations.end(), name),
                               reservations.end());
            return ok;
        }
        return core::ProcessResult{1, 0, false, "unexpected command\n"};
    }
};

outcome::RunReport validation_of(const std::map<std::string, core::Verdict>& verdicts) {
    outcome::RunReport r;
    r.run_id = "val1";
    for (const auto& [name, v] : verdicts) {
        outcome::NodeReport n;
        n.name = name;
        n.verdict = v;
        if (v != core::Verdict::pass) {
            n.reasons.push_back("link.netdev eth0: mtu 1400 != expected 1500");
        }
        r.nodes.push_back(n);
    }
    return r;
}

CertifyOptions certify_options(std::vector<std::string> nodes, bool apply) {
    CertifyOptions o;
    o.nodes = std::move(nodes);
    o.apply = apply;
    o.user = "root";
    return o;
}

TEST(Certify, PlanOnlyChangesNothing) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n2"] = {"IDLE+DRAIN", "RMA 7"};
    bool ran = false;
    auto options = certify_options({"n1", "n2"}, false);
    options.run.config.checks = {"link.netdev"};  // one candidate: node-local checks only
    auto report = certify_slurm(options, slurm, [&](const RunOptions&) {
        ran = true;
        return outcome::RunReport{};
    });
    EXPECT_FALSE(ran);
    EXPECT_EQ(report.nodes[0].outcome, "would-certify");
    EXPECT_EQ(report.nodes[1].outcome, "skipped");
    for (const auto& c : slurm.calls) {
        EXPECT_EQ(c[1], "show") << "a plan must not change anything";
    }
}

TEST(Certify, ResumesPassKeepsFailOperatorUntouchedReservationDeleted) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n2"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n3"] = {"IDLE+DRAIN", "RMA 7"};
    slurm.nodes["n4"] = {"IDLE", ""};
    RunOptions seen;
    auto report = certify_slurm(
        certify_options({"n1", "n2", "n3", "n4"}, true), slurm, [&](const RunOptions& run) {
            seen = run;
            // Validation runs inside the reservation, resumed nodes only.
            EXPECT_EQ(slurm.reservations.size(), 1u);
            EXPECT_EQ(slurm.nodes["n1"].state, "IDLE");
            EXPECT_EQ(slurm.nodes["n3"].reason, "RMA 7");
            return validation_of({{"n1", core::Verdict::pass}, {"n2", core::Verdict::fail}});
        });
    EXPECT_EQ(seen.launcher, "slurm");
    EXPECT_FALSE(seen.apply);
    ASSERT_EQ(seen.nodes.size(), 2u);
    const auto* entry = find_launcher(seen.launchers, "slurm");
    ASSERT_NE(entry, nullptr);
    const auto made = entry->make();
    EXPECT_EQ(dynamic_cast<const SlurmLauncher&>(*made).options().reservation, report.reservation);
    EXPECT_TRUE(slurm.reservations.empty());
    EXPECT_TRUE(report.reservation_deleted);
    EXPECT_EQ(slurm.nodes["n1"].state, "IDLE");
    EXPECT_EQ(slurm.nodes["n2"].state, "IDLE+DRAIN");
    // A fixed reason; the finding's words go to the node's Comment.
    EXPECT_EQ(slurm.nodes["n2"].reason, "preflight: check failed");
    std::string comment;
    for (const auto& c : slurm.calls) {
        if (c.size() >= 6 && c[1] == "update" && c[2] == "NodeName=n2" && c[3] == "State=DRAIN") {
            comment = c[5];
        }
    }
    EXPECT_THAT(comment, HasSubstr("mtu 1400"));
    EXPECT_EQ(comment.rfind("Comment=preflight: ", 0), 0u) << comment;
    EXPECT_EQ(slurm.nodes["n3"].reason, "RMA 7");
    EXPECT_EQ(report.nodes[0].outcome, "certified");
    EXPECT_EQ(report.nodes[1].outcome, "failed");
    EXPECT_EQ(report.nodes[2].outcome, "skipped");
    EXPECT_EQ(report.nodes[3].outcome, "skipped");
    EXPECT_EQ(report.exit_code, 1);
    EXPECT_EQ(report.to_json().at("certified"), nlohmann::json::array({"n1"}));
}

TEST(Certify, ValidationThatThrowsReDrainsAndDeletesTheReservation) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    auto options = certify_options({"n1"}, true);
    options.run.config.checks = {"link.netdev"};  // node-local only: one node can be certified
    auto report = certify_slurm(options, slurm, [&](const RunOptions&) -> outcome::RunReport {
        throw std::runtime_error("controller cannot listen");
    });
    EXPECT_EQ(slurm.nodes["n1"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.nodes["n1"].reason, "preflight: uncertified");
    EXPECT_TRUE(slurm.reservations.empty());
    EXPECT_EQ(report.exit_code, 4);
    EXPECT_THAT(report.error, HasSubstr("controller cannot listen"));
}

TEST(Certify, NodeMissingFromTheValidationIsNotCertified) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n2"] = {"IDLE+DRAIN", "preflight: uncertified"};
    auto report = certify_slurm(certify_options({"n1", "n2"}, true), slurm, [&](const RunOptions&) {
        return validation_of({{"n1", core::Verdict::pass}});  // n2 absent
    });
    EXPECT_EQ(slurm.nodes["n2"].state, "IDLE+DRAIN");
    EXPECT_EQ(report.nodes[1].outcome, "error");
    EXPECT_TRUE(slurm.reservations.empty());
}

TEST(Certify, NoReservationNoResume) {
    FakeScontrol slurm;
    slurm.refuse_reservation = true;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    bool ran = false;
    auto options = certify_options({"n1"}, true);
    options.run.config.checks = {"link.netdev"};
    auto report = certify_slurm(options, slurm, [&](const RunOptions&) {
        ran = true;
        return outcome::RunReport{};
    });
    EXPECT_FALSE(ran);
    EXPECT_EQ(slurm.nodes["n1"].state, "IDLE+DRAIN");
    EXPECT_EQ(report.exit_code, 4);
    EXPECT_THAT(report.error, HasSubstr("busy"));
}

TEST(Certify, ALoneCandidateWithACollectiveAndNoPartnerIsIncompleteAndStaysDrained) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    bool ran = false;
    // The default checks include collective.gloo_allreduce, which needs a partner.
    auto report = certify_slurm(certify_options({"n1"}, true), slurm, [&](const RunOptions&) {
        ran = true;
        return validation_of({{"n1", core::Verdict::pass}});
    });
    EXPECT_FALSE(ran);
    EXPECT_EQ(slurm.nodes["n1"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.nodes["n1"].reason, "preflight: uncertified");
    EXPECT_TRUE(slurm.reservations.empty());
    EXPECT_EQ(report.nodes[0].outcome, "incomplete");
    EXPECT_THAT(report.nodes[0].detail, HasSubstr("--reference-nodes"));
    EXPECT_EQ(report.exit_code, 6);
    for (const auto& c : slurm.calls) {
        EXPECT_EQ(c[1], "show") << "nothing may change without a partner";
    }
}

TEST(Certify, AReferenceNodeIsReservedAndJoinsTheRunButIsNeverResumedOrDrained) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["good1"] = {"IDLE", ""};
    auto options = certify_options({"n1"}, true);
    options.reference_nodes = {"good1"};
    options.run.nodes = {core::Node{"n1", {}, {}, {}}, core::Node{"good1", {}, {}, {}, true}};
    RunOptions seen;
    auto report = certify_slurm(options, slurm, [&](const RunOptions& run) {
        seen = run;
        auto v = validation_of({{"n1", core::Verdict::pass}, {"good1", core::Verdict::pass}});
        v.nodes[0].reference = true;  // good1 sorts first
        return v;
    });
    ASSERT_EQ(seen.nodes.size(), 2u);
    EXPECT_EQ(seen.nodes[1].name, "good1");
    EXPECT_TRUE(seen.nodes[1].reference);
    bool reserved_both = false;
    for (const auto& c : slurm.calls) {
        if (c.size() > 5 && c[1] == "create") {
            reserved_both = std::find(c.begin(), c.end(), "Nodes=n1,good1") != c.end() ||
                            std::find(c.begin(), c.end(), "Nodes=good1,n1") != c.end();
            EXPECT_TRUE(reserved_both) << ::testing::PrintToString(c);
        }
        if (c.size() > 2 && c[1] == "update") {
            EXPECT_NE(c[2], "NodeName=good1") << "a reference node is never resumed or drained";
        }
    }
    EXPECT_TRUE(reserved_both);
    EXPECT_EQ(report.nodes.size(), 1u);
    EXPECT_EQ(report.nodes[0].outcome, "certified");
    EXPECT_EQ(report.exit_code, 0);
}

TEST(Certify, ADrainedReferenceNodeIsNoPartner) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["good1"] = {"IDLE+DRAIN", "RMA 9"};
    auto options = certify_options({"n1"}, true);
    options.reference_nodes = {"good1"};
    bool ran = false;
    auto report = certify_slurm(options, slurm, [&](const RunOptions&) {
        ran = true;
        return outcome::RunReport{};
    });
    EXPECT_FALSE(ran);
    EXPECT_EQ(report.exit_code, 4);
    EXPECT_THAT(report.error, HasSubstr("reference node good1"));
    EXPECT_EQ(slurm.nodes["n1"].reason, "preflight: uncertified");
}

TEST(Certify, AnIncompleteOrInconclusiveResultIsNotCertifiedAndKeepsTheOldReason) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n2"] = {"IDLE+DRAIN", "preflight: uncertified"};
    auto report = certify_slurm(certify_options({"n1", "n2"}, true), slurm, [&](const RunOptions&) {
        auto v = validation_of({{"n1", core::Verdict::warn}, {"n2", core::Verdict::warn}});
        for (auto& n : v.nodes) {
            outcome::NodeCheck c;
            c.check = "collective.gloo_allreduce";
            c.verdict = core::Verdict::warn;
            c.undecided =
                n.name == "n1" ? core::Undecided::incomplete : core::Undecided::inconclusive;
            n.checks.push_back(c);
        }
        return v;
    });
    EXPECT_EQ(slurm.nodes["n1"].state, "IDLE+DRAIN");
    EXPECT_EQ(slurm.nodes["n1"].reason, "preflight: uncertified");
    EXPECT_EQ(slurm.nodes["n2"].reason, "preflight: uncertified");
    EXPECT_EQ(report.nodes[0].outcome, "incomplete");
    EXPECT_EQ(report.nodes[1].outcome, "inconclusive");
    EXPECT_EQ(report.exit_code, 4);  // inconclusive outranks incomplete
    EXPECT_TRUE(slurm.reservations.empty());
}

TEST(Standalone, FloorsAndBaseline) {
    core::EvaluationConfig eval;
    eval.threshold_fraction = 0.9;
    eval.floors["x.bw"]["gbps"] = 10.0;
    agent::StandaloneOutcome o;
    core::CheckResult r;
    r.check = "x.bw";
    r.verdict = core::Verdict::pass;
    r.metrics["gbps"] = 12.0;
    o.results = {r};
    agent::judge_standalone(o, eval, {}, "");
    EXPECT_EQ(o.verdict, core::Verdict::pass);

    agent::StandaloneOutcome below_floor;
    below_floor.results = {r};
    below_floor.results[0].metrics["gbps"] = 9.0;
    agent::judge_standalone(below_floor, eval, {}, "");
    EXPECT_EQ(below_floor.verdict, core::Verdict::fail);
    EXPECT_THAT(below_floor.reasons[0], HasSubstr("< floor 10"));

    agent::StandaloneOutcome below_baseline;
    below_baseline.results = {r};
    agent::judge_standalone(below_baseline, eval, {{"x.bw", {{"gbps", 20.0}}}}, "r7");
    EXPECT_EQ(below_baseline.verdict, core::Verdict::fail);
    EXPECT_THAT(below_baseline.reasons[0], HasSubstr("of baseline 20.0 (run r7)"));

    agent::StandaloneOutcome missing;
    missing.results = {r};
    missing.results[0].metrics.clear();
    agent::judge_standalone(missing, eval, {}, "");
    EXPECT_EQ(missing.verdict, core::Verdict::error);  // never a pass

    agent::StandaloneOutcome none;
    agent::judge_standalone(none, eval, {}, "");
    EXPECT_EQ(none.verdict, core::Verdict::error);
}

TEST(Standalone, BaselineFromAControllerReport) {
    const std::string path = ::testing::TempDir() + "/pf-baseline-report.json";
    {
        std::ofstream out(path);
        out << R"({"run_id": "r9", "nodes": [
            {"name": "n1", "verdict": "pass",
             "checks": {"x.bw": {"verdict": "pass", "metrics": {"gbps": 20.0}}}},
            {"name": "n2", "verdict": "fail",
             "checks": {"x.bw": {"verdict": "fail", "metrics": {"gbps": 3.0}}}}]})";
    }
    std::string run;
    auto n1 = agent::load_baseline(path, "n1", &run);
    ASSERT_TRUE(n1);
    EXPECT_EQ(run, "r9");
    EXPECT_DOUBLE_EQ(n1.value().at("x.bw").at("gbps"), 20.0);
    auto n2 = agent::load_baseline(path, "n2", &run);  // a failed node's figures are no baseline
    ASSERT_TRUE(n2);
    EXPECT_TRUE(n2.value().empty());
    EXPECT_TRUE(agent::load_baseline(path, "n3", &run).value().empty());
    EXPECT_FALSE(agent::load_baseline(path + ".missing", "n1", &run));
}

}  // namespace
}  // namespace preflight::controller

namespace preflight::controller {
namespace {

TEST(CertifyDryRun, SaysWhatApplyWouldCreateAndLaunchAndChangesNothing) {
    FakeScontrol slurm;
    slurm.nodes["n1"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n2"] = {"IDLE+DRAIN", "preflight: uncertified"};
    slurm.nodes["n3"] = {"IDLE+DRAIN", "RMA 7"};
    auto options = certify_options({"n1", "n2", "n3"}, false);
    options.dry_run = true;
    options.run.agent_path = "/usr/bin/preflight-agent";
    options.run.config.checks = {"link.netdev"};
    bool ran = false;
    auto report = certify_slurm(options, slurm, [&](const RunOptions&) {
        ran = true;
        return outcome::RunReport{};
    });
    EXPECT_FALSE(ran);
    for (const auto& c : slurm.calls) {
        EXPECT_EQ(c[1], "show") << "a dry run must not change anything";
    }
    const std::string& plan = report.dry_run;
    EXPECT_NE(plan.find("scontrol create reservation ReservationName=preflight-certify-" +
                        report.run_id + " 'Nodes=n[1-2]' StartTime=now"),
              std::string::npos)
        << plan;
    EXPECT_NE(plan.find("--reservation=preflight-certify-" + report.run_id), std::string::npos)
        << plan;
    EXPECT_EQ(plan.find("n3"), std::string::npos) << "someone else's drain is no candidate";
    EXPECT_NE(report.to_text().find("dry run: what --apply would do"), std::string::npos);
    EXPECT_EQ(report.to_json()["dry_run"], plan);
}

}  // namespace
}  // namespace preflight::controller
