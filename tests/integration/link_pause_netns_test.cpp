// link.pause through the real ETHTOOL_GSSET_INFO/GSTRINGS/GSTATS/GDRVINFO ioctls on a real veth
// pair in a network namespace this test creates and removes (veth has no pause/PFC counters: the
// check names it and skips); then every link check end to end on a namespace
// fabric (real controller and agents), with the link findings, the root-cause hint and the drift
// finding in the JSON and terminal reports. The root namespace's interfaces are never touched.
// Needs root and iproute2; skips with the reason otherwise.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/process.hpp"
#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/pause.hpp"
#include "testbed/fabric.hpp"

namespace preflight::plugins {
namespace {

std::string why_not_runnable() {
    if (::geteuid() != 0) {
        return "needs root to create a network namespace";
    }
    if (!std::filesystem::exists("/usr/sbin/ip") && !std::filesystem::exists("/sbin/ip") &&
        !std::filesystem::exists("/usr/bin/ip")) {
        return "iproute2 (ip) is not installed";
    }
    return {};
}

bool ip(const std::vector<std::string>& args, std::string* output = nullptr) {
    std::vector<std::string> argv = {"ip"};
    argv.insert(argv.end(), args.begin(), args.end());
    core::ProcessOptions opts;
    opts.timeout = std::chrono::seconds(10);
    auto result = core::run_process(argv, opts);
    if (output != nullptr && result) {
        *output = result.value().output;
    }
    return result && result.value().exit_code == 0;
}

// Runs fn on a thread that has joined the namespace: setns(CLONE_NEWNET) changes only the
// calling thread, so the test's own thread stays in the root namespace.
template <class Fn>
auto in_netns(const std::string& ns, Fn fn) {
    return std::async(std::launch::async,
                      [ns, fn] {
                          const int fd =
                              ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
                          if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
                              if (fd >= 0) {
                                  ::close(fd);
                              }
                              throw std::runtime_error("setns into " + ns + " failed");
                          }
                          ::close(fd);
                          return fn();
                      })
        .get();
}

class PauseNetns : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = why_not_runnable(); !why.empty()) {
            GTEST_SKIP() << why;
        }
        m_ns = "pf-pause-" + std::to_string(::getpid());
        ip({"netns", "del", m_ns});
        ASSERT_TRUE(ip({"netns", "add", m_ns}));
        m_created = true;
        ASSERT_TRUE(
            ip({"-n", m_ns, "link", "add", "pfva", "type", "veth", "peer", "name", "pfvb"}));
        ASSERT_TRUE(ip({"-n", m_ns, "link", "set", "pfva", "up"}));
        ASSERT_TRUE(ip({"-n", m_ns, "link", "set", "pfvb", "up"}));
    }
    void TearDown() override {
        if (m_created) {
            // Deleting the namespace destroys the veth pair with it.
            EXPECT_TRUE(ip({"netns", "del", m_ns}));
        }
    }

    std::string m_ns;
    bool m_created = false;
};

TEST_F(PauseNetns, ReadsVethStatisticsThroughTheIoctl) {
    auto stats = in_netns(m_ns, [] { return ethtool::read_stats("pfva"); });
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    // veth's ethtool set: peer_ifindex, then per-queue rx/tx XDP and drop counters.
    ASSERT_TRUE(stats->contains("peer_ifindex"));
    EXPECT_GT(stats->at("peer_ifindex"), 0u);
    EXPECT_TRUE(stats->contains("rx_queue_0_drops"));
    auto driver = in_netns(m_ns, [] { return ethtool::read_driver("pfva"); });
    ASSERT_TRUE(driver.ok()) << driver.error().message;
    EXPECT_EQ(*driver, "veth");
}

// veth has ethtool statistics but no pause/PFC counters: the check names the pair and skips in
// auto mode, and warns when the config names an interface it cannot judge.
TEST_F(PauseNetns, VethHasNoPauseCountersAndSkips) {
    auto run = [&](const nlohmann::json& params) {
        return in_netns(m_ns, [params] {
            CheckContext ctx;
            ctx.node = "n1";
            ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            PauseCheck check;
            return check.run(ctx, params);
        });
    };
    auto r = run({{"sample_ms", 50}});
    EXPECT_EQ(r.verdict, core::Verdict::skip) << r.detail;
    EXPECT_EQ(r.detail,
              "not judged: pfva (veth): no pause/PFC counters known for it; pfvb (veth): no "
              "pause/PFC counters known for it");
    EXPECT_EQ(r.metrics.at("interfaces"), 0);
    r = run({{"sample_ms", 50}, {"interfaces", {"pfva"}}});
    EXPECT_EQ(r.verdict, core::Verdict::warn) << r.detail;
    EXPECT_EQ(r.detail, "not judged: pfva (veth): no pause/PFC counters known for it");
}

// Begin and end in auto mode on the pair: a baseline is kept and the end phase consumes it,
// and both skip because nothing on veth is judged.
TEST_F(PauseNetns, BeginAndEndOnVethSkip) {
    link::CounterSnapshots::instance().clear();
    auto run = [&](const char* phase) {
        return in_netns(m_ns, [phase] {
            CheckContext ctx;
            ctx.node = "n1";
            ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            PauseCheck check;
            return check.run(ctx, {{"phase", phase}});
        });
    };
    auto begin = run("begin");
    EXPECT_EQ(begin.verdict, core::Verdict::skip) << begin.detail;
    EXPECT_EQ(begin.detail, "no interface with pause/PFC counters to record");
    auto end = run("end");
    EXPECT_EQ(end.verdict, core::Verdict::skip) << end.detail;
    EXPECT_EQ(end.detail,
              "not judged: pfva (veth): no pause/PFC counter names known for this driver; pfvb "
              "(veth): no pause/PFC counter names known for this driver");
    EXPECT_TRUE(end.metrics.contains("baseline_age_s"));
    // The end consumed the baseline: a second end has none, and nothing to judge: skip.
    auto again = run("end");
    EXPECT_EQ(again.verdict, core::Verdict::skip);
    EXPECT_EQ(again.detail, "no baseline snapshot: run with phase begin first");
}

TEST_F(PauseNetns, RootNamespaceInterfacesAreNotVisible) {
    auto stats = in_netns(m_ns, [] { return ethtool::read_stats("eth0"); });
    ASSERT_FALSE(stats.ok());
    EXPECT_EQ(stats.error().message, "eth0: ETHTOOL_GSSET_INFO: No such device");
}

// h3 is shaped to half the others' rate and its eth0 MTU is lowered inside its namespace: the
// collective fails it, link.netdev says why, and drift says the rest of the cohort disagrees.
TEST(LinkChecksNetns, FindingsHintAndDriftReachTheReports) {
    if (auto why = why_not_runnable(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    testbed::FabricSpec spec;
    spec.name = "pfl" + std::to_string(::getpid() % 100000);
    spec.hosts = 4;
    spec.subnet = "10.78.0";
    spec.rates["h3"] = "200mbit";
    auto fabric = testbed::Fabric::create(spec);
    ASSERT_TRUE(fabric) << fabric.error().message;
    ASSERT_TRUE(ip({"-n", spec.name + "-h3", "link", "set", "eth0", "mtu", "1400"}));

    const auto dir =
        std::filesystem::temp_directory_path() / ("pf-it-link-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string inventory = (dir / "inventory.yaml").string();
    const std::string config = (dir / "config.yaml").string();
    const std::string report_dir = (dir / "report").string();
    ASSERT_TRUE(core::write_file_atomic(inventory, fabric->inventory_yaml()));
    ASSERT_TRUE(core::write_file_atomic(
        config,
        R"(checks: [link.netdev, link.infiniband, link.pcie, link.peermem, link.roce, link.pause, collective.gloo_allreduce]
params:
  link.netdev: {interfaces: [eth0], expect_mtu: 1500}
  link.pause: {sample_ms: 200}
  collective.gloo_allreduce: {bytes: 16777216, warmup: 1, iters: 3, timeout_s: 30}
actions: {max_action_fraction: 0.5}
deadlines: {connect_s: 15}
)"));
    core::ProcessOptions opts;
    opts.timeout = std::chrono::seconds(180);
    auto run = core::run_process(
        {"ip", "netns", "exec", fabric->head_netns(),
         std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight", "run", "--inventory", inventory,
         "--config", config, "--launcher", "local", "--report-dir", report_dir, "--no-progress"},
        opts);
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_EQ(run.value().exit_code, 1) << run.value().output;

    std::ifstream json_in(report_dir + "/report.json");
    const auto report = nlohmann::json::parse(json_in);
    for (const auto& node : report.at("nodes")) {
        const auto name = node.at("name").get<std::string>();
        const auto& checks = node.at("checks");
        // This host has no RDMA devices, GPUs or RoCE settings: skip, never pass.
        for (const char* check : {"link.infiniband", "link.pcie", "link.peermem", "link.roce"}) {
            EXPECT_EQ(checks.at(check).at("verdict"), "skip") << name << " " << check;
        }
        // link.pause read the node's own veth through the ioctls, inside its namespace: a
        // baseline in round 0 and the end phase in round 4. veth has no pause/PFC counters, so
        // it is named and skipped, never passed.
        const auto& pause = checks.at("link.pause");
        EXPECT_EQ(pause.at("verdict"), "skip") << name;
        EXPECT_EQ(pause.at("detail"),
                  "not judged: eth0 (veth): no pause/PFC counter names known for this driver")
            << pause.dump();
        EXPECT_TRUE(pause.at("metrics").contains("baseline_age_s")) << pause.dump();
        if (name != "h3") {
            EXPECT_EQ(node.at("verdict"), "pass") << name;
            EXPECT_FALSE(checks.contains("drift")) << name;
            continue;
        }
        EXPECT_EQ(node.at("verdict"), "fail");
        EXPECT_EQ(checks.at("link.netdev").at("detail"), "eth0: mtu 1400 != expected 1500");
        const auto gloo = checks.at("collective.gloo_allreduce").at("detail").get<std::string>();
        EXPECT_NE(gloo.find("; likely cause: link.netdev: eth0: mtu 1400 != expected 1500"),
                  std::string::npos)
            << gloo;
        EXPECT_EQ(checks.at("drift").at("detail"),
                  "link.netdev: eth0.mtu 1400; 1500 on 3 of 4 nodes");
    }
    // Round 4 ran the end phase on every node once the collective rounds were done.
    bool round4 = false;
    for (const auto& round : report.at("rounds")) {
        if (round.at("round") == 4) {
            round4 = true;
            EXPECT_EQ(round.at("purpose"), "counters after collectives");
            EXPECT_EQ(round.at("steps"), 8);  // link.pause and link.infiniband on 4 nodes
        }
    }
    EXPECT_TRUE(round4) << report.at("rounds").dump();
    std::ifstream text_in(report_dir + "/report.txt");
    std::stringstream text;
    text << text_in.rdbuf();
    EXPECT_NE(text.str().find("likely cause: link.netdev: eth0: mtu 1400 != expected 1500"),
              std::string::npos)
        << text.str();
    EXPECT_NE(text.str().find("warn: drift: link.netdev: eth0.mtu 1400; 1500 on 3 of 4 nodes"),
              std::string::npos)
        << text.str();
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace preflight::plugins
