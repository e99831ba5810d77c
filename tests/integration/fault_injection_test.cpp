// Faults injected into real runs on a namespace fabric (real agents, real Gloo traffic over shaped
// links): an agent stopped mid-collective, a host's link set down mid-run, random packet loss on
// one host, a flood of silent connections to the controller, a peer killed as its collective
// starts. Each test asserts the outcome operators rely on: the faulty node is `error` with a reason
// (or judged on what it measured), every other node is judged normally, the run ends within its
// bound, the report is complete, and nothing is drained on `error` alone.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>

#include "tests/integration/fabric_run.hpp"

namespace preflight::testing {
namespace {

using namespace std::chrono_literals;

// 32 MiB at 400 mbit: about 1.4 s per iteration, time enough to act mid-collective. Heartbeats
// every second make a silent agent "lost" after a few seconds.
constexpr const char* k_config = R"(checks: [collective.gloo_allreduce]
params:
  collective.gloo_allreduce: {bytes: 33554432, warmup: 1, iters: 3, timeout_s: 20}
deadlines: {connect_s: 15, heartbeat_s: 1}
actions: {max_action_fraction: 0.5}
)";

// What every run must end with: within `bound`, a complete report, `faulty` not drained (unless
// it was judged on what it measured: `judged`, and then the run plans actions on nothing else).
void expect_complete_run(FabricRun& run, std::chrono::seconds bound, const std::string& faulty,
                         bool judged = false) {
    auto took = run.wait(bound);
    ASSERT_TRUE(took.has_value()) << "the run did not end within " << bound.count() << " s\n"
                                  << run.controller_log();
    std::printf("[ fault    ] run took %.1f s (bound %lld s)\n", took->count(),
                static_cast<long long>(bound.count()));
    auto report = run.report();
    ASSERT_EQ(report.at("nodes").size(), run.fabric().hosts().size());
    for (const auto& n : report.at("nodes")) {
        EXPECT_TRUE(n.contains("verdict") && n.contains("reasons")) << n.dump();
    }
    for (const auto& a : report.at("actions")) {
        if (judged) {
            EXPECT_EQ(a.at("node"), faulty) << "only the faulty node may be acted on: " << a.dump();
        } else {
            EXPECT_NE(a.at("node"), faulty)
                << "a node that could not be judged must not be drained";
        }
    }
}

void expect_error_with_reason(const nlohmann::json& report, const std::string& node,
                              const std::string& reason_part) {
    const auto* n = node_entry(report, node);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->at("verdict"), "error") << n->dump(1);
    EXPECT_NE(n->at("reasons").dump().find(reason_part), std::string::npos) << n->dump(1);
}

void expect_others_pass(const nlohmann::json& report, const std::string& faulty) {
    for (const auto& [node, verdict] : verdicts(report)) {
        if (node != faulty) {
            EXPECT_EQ(verdict, "pass") << node << ": " << node_entry(report, node)->dump(1);
        }
    }
}

class FaultInjection : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = why_no_fabric(); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
};

TEST_F(FaultInjection, AgentStoppedMidCollectiveIsErrorAndTheRunEnds) {
    auto run = FabricRun::start("sigstop", 4, k_config);
    ASSERT_TRUE(run);
    ASSERT_TRUE(wait_for_text(run->agent_log("h2"), "running collective.gloo_allreduce", 30s));
    std::this_thread::sleep_for(500ms);
    const pid_t pid = run->agent_pid("h2");
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGSTOP), 0);
    expect_complete_run(*run, 90s, "h2");
    ::kill(pid, SIGKILL);  // a stopped agent does not act on the controller's shutdown
    auto report = run->report();
    expect_error_with_reason(report, "h2", "lost");
    expect_others_pass(report, "h2");
    EXPECT_EQ(run->exit_code(), 4);
}

TEST_F(FaultInjection, LinkSetDownMidRunIsErrorAndTheRunEnds) {
    auto run = FabricRun::start("linkdown", 4, k_config);
    ASSERT_TRUE(run);
    ASSERT_TRUE(wait_for_text(run->agent_log("h3"), "running collective.gloo_allreduce", 30s));
    std::this_thread::sleep_for(500ms);
    auto down = core::run_process({"ip", "-n", run->netns("h3"), "link", "set", "eth0", "down"});
    ASSERT_TRUE(down && down->exit_code == 0) << (down ? down->output : down.error().message);
    expect_complete_run(*run, 90s, "h3");
    auto report = run->report();
    expect_error_with_reason(report, "h3", "lost");
    expect_others_pass(report, "h3");
    EXPECT_EQ(run->exit_code(), 4);
}

std::string nft_in(const std::string& ns, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"ip", "netns", "exec", ns, "nft"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = core::run_process(argv);
    EXPECT_TRUE(r && r->exit_code == 0) << (r ? r->output : r.error().message);
    return r ? r->output : "";
}

// Sum of the "packets N" counters in an `nft list table` listing.
long counted_packets(const std::string& listing) {
    long total = 0;
    for (auto at = listing.find("packets "); at != std::string::npos;
         at = listing.find("packets ", at + 1)) {
        total += std::stol(listing.substr(at + 8));
    }
    return total;
}

TEST_F(FaultInjection, RandomPacketLossOnOneHostIsJudgedOnWhatItMeasured) {
    // Every host shaped to 400 mbit; h4 drops 13 % of its packets both ways (nftables, since the
    // kernel here has no netem), from before its agent starts. TCP retransmits, so the collective
    // completes, slowly: h4 must be judged on what it measured (slow: fail, confirmed with good
    // partners), never lost and never passed. 3 % loss (before) left h4 near the threshold, pass
    // in some runs and fail or inconsistent in others; 10 % measured 61-87 % of the median (too
    // close to 90 %), 20 % timed steps out at 20 s; 13 % with 60 s steps measured 31-62 % of the
    // median in 5 of 5 runs.
    const auto add_loss = [](const testbed::Fabric& fabric) {
        const std::string ns = fabric.name() + "-h4";
        nft_in(ns, {"add", "table", "inet", "pfloss"});
        for (const std::string hook : {"input", "output"}) {
            nft_in(ns, {"add", "chain", "inet", "pfloss", hook,
                        "{ type filter hook " + hook + " priority 0; }"});
            nft_in(ns, {"add", "rule", "inet", "pfloss", hook, "numgen", "random", "mod", "100",
                        "<", "13", "counter", "drop"});
        }
    };
    FabricRunOptions options;
    options.before_run = add_loss;
    // A step of the lossy host takes up to ~3x its normal time: 60 s per step, so that a slow step
    // is measured, not timed out (an unconfirmed suspect, once in 5 runs at 20 s).
    std::string config = k_config;
    config.replace(config.find("timeout_s: 20"), 13, "timeout_s: 60");
    auto run = FabricRun::start("loss", 4, config, options);
    ASSERT_TRUE(run);
    expect_complete_run(*run, 240s, "h4", /*judged=*/true);
    const long dropped =
        counted_packets(nft_in(run->netns("h4"), {"list", "table", "inet", "pfloss"}));
    EXPECT_GT(dropped, 100) << "the loss rules dropped almost nothing: the fault was not injected";
    auto report = run->report();
    const auto* h4 = node_entry(report, "h4");
    ASSERT_NE(h4, nullptr);
    const auto& gloo = h4->at("checks").at("collective.gloo_allreduce");
    EXPECT_EQ(h4->at("verdict"), "fail") << h4->dump(1);
    EXPECT_LT(gloo.at("fraction_of_median").get<double>(), 0.9) << gloo.dump(1);
    expect_others_pass(report, "h4");
    EXPECT_EQ(run->exit_code(), 1);
    std::printf("[ fault    ] 13%% loss on h4: %ld packets dropped, verdict %s, %s\n", dropped,
                h4->at("verdict").dump().c_str(), gloo.at("detail").dump().c_str());
}

TEST_F(FaultInjection, SilentConnectionFloodDoesNotStopTheRun) {
    // A fixed port so the flood knows where to go; 600 connections from h4's namespace that never
    // send a byte, held open for 25 s. The controller may open only 200 files, so the flood
    // exhausts its descriptors whatever the machine's speed: it must shed silent connections to
    // let the agents in.
    const int port = 20000 + ::getpid() % 20000;
    std::string config = k_config;
    config += "controller: {port: " + std::to_string(port) + "}\n";
    FabricRunOptions options;
    options.wrapper = {"prlimit", "--nofile=200:200"};
    auto run = FabricRun::start("flood", 4, config, options);
    ASSERT_TRUE(run);
    const std::string head = run->fabric().head_address();
    const std::string flood_script =
        "import socket, sys, time\n"
        "addr = (sys.argv[1], int(sys.argv[2]))\n"
        "socks, opened, end = [], 0, time.time() + 25\n"
        "while time.time() < end:\n"
        "    while len(socks) < 600:\n"
        "        s = socket.socket(); s.settimeout(1)\n"
        "        try:\n"
        "            s.connect(addr); socks.append(s); opened += 1\n"
        "        except OSError:\n"
        "            s.close(); break\n"
        "        if opened % 100 == 0:\n"
        "            print('opened', opened, flush=True)\n"
        "    time.sleep(0.05)\n";
    auto flood = core::ChildProcess::spawn({"ip", "netns", "exec", run->netns("h4"), "python3",
                                            "-c", flood_script, head, std::to_string(port)},
                                           {}, run->dir() + "/flood.log");
    ASSERT_TRUE(flood) << flood.error().message;
    ASSERT_TRUE(wait_for_text(run->dir() + "/flood.log", "opened 300", 20s));
    EXPECT_TRUE(run->controller().running()) << "the run ended before the flood was in place";
    expect_complete_run(*run, 90s, "");
    auto report = run->report();
    for (const auto& [node, verdict] : verdicts(report)) {
        EXPECT_EQ(verdict, "pass") << node << ": " << node_entry(report, node)->dump(1);
    }
    EXPECT_EQ(run->exit_code(), 0) << run->controller_log();
    EXPECT_NE(run->controller_log().find("closing unauthenticated connection"), std::string::npos)
        << "the flood never pressed the controller: " << run->controller_log();
    const std::string flood_log = read_text(run->dir() + "/flood.log");
    std::printf("[ fault    ] flood from h4: %s",
                flood_log.substr(flood_log.rfind("opened")).c_str());
    flood->terminate();
}

TEST_F(FaultInjection, PeerKilledAsItsCollectiveStartsIsErrorAndItsPartnerIsRepaired) {
    // Killed the moment its agent logs the step: the Gloo rendezvous through the controller's
    // store is still under way, so its partner waits on keys that never come.
    auto run = FabricRun::start("rendezvous", 4, k_config);
    ASSERT_TRUE(run);
    ASSERT_TRUE(wait_for_text(run->agent_log("h1"), "running collective.gloo_allreduce", 30s));
    const pid_t pid = run->agent_pid("h1");
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    expect_complete_run(*run, 90s, "h1");
    auto report = run->report();
    expect_error_with_reason(report, "h1", "lost");
    expect_others_pass(report, "h1");
    EXPECT_EQ(run->exit_code(), 4);
}

}  // namespace
}  // namespace preflight::testing
