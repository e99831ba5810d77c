// 1024 virtual agents (the scale harness, bench/scale_harness) against a real `preflight run
// --launcher connect` on loopback: every connection authenticates with the HMAC challenge, the
// controller runs its rounds, and the report flags exactly the chosen bad nodes, in at most three
// group rounds, with no node in two groups of one round and never all-pairs.
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace {

using nlohmann::json;
using preflight::core::ChildProcess;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";

int free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    return acceptor.local_endpoint().port();
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

class ScaleHarness : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() / ("pf-scale-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
        m_token_file = (m_dir / "token").string();
        std::ofstream(m_token_file)
            << "0f1e2d3c4b5a69788796a5b4c3d2e1f05c0f1e2d3a4b69788796a5b4c3d2e1f0\n";
        ::chmod(m_token_file.c_str(), 0600);
        std::ofstream(m_dir / "config.yaml")
            << "checks: [link.netdev, collective.gloo_allreduce]\n"
               "deadlines: {connect_s: 60, heartbeat_s: 2, step_slack_s: 15}\n";
    }
    void TearDown() override {
        // Children are stopped by pid even when an assertion failed half-way.
        for (auto* child : {&m_controller, &m_fleet}) {
            if (*child) {
                (*child)->terminate(std::chrono::milliseconds(1000));
            }
        }
        if (!HasFailure()) {
            std::filesystem::remove_all(m_dir);
        }
    }

    std::filesystem::path m_dir;
    std::string m_token_file;
    std::optional<ChildProcess> m_controller;
    std::optional<ChildProcess> m_fleet;
};

TEST_F(ScaleHarness, ThousandAgentsFindExactlyTheBadNodes) {
    const std::set<std::string> bad = {"v0003", "v0004", "v0100", "v0513", "v1024"};
    int port = free_port();
    auto controller = ChildProcess::spawn(
        {k_bin_dir + "/preflight", "run", "--nodes", "v[0001-1024]", "--launcher", "connect",
         "--listen", "127.0.0.1", "--port", std::to_string(port), "--secret-file", m_token_file,
         "--config", (m_dir / "config.yaml").string(), "--report-dir", (m_dir / "report").string(),
         "--no-progress"},
        {}, (m_dir / "controller.log").string());
    ASSERT_TRUE(controller) << controller.error().message;
    m_controller.emplace(std::move(controller.value()));

    auto fleet = ChildProcess::spawn(
        {k_bin_dir + "/preflight-scale-harness", "--virtual", "1024", "--controller",
         "127.0.0.1:" + std::to_string(port), "--bad", "v[0003-0004,0100,0513,1024]", "--check-ms",
         "200", "--seed", "7", "--secret-file", m_token_file, "--exit-after", "120"},
        {}, (m_dir / "harness.log").string());
    ASSERT_TRUE(fleet) << fleet.error().message;
    m_fleet.emplace(std::move(fleet.value()));

    ASSERT_TRUE(m_controller->wait_for(std::chrono::seconds(120)))
        << read_file(m_dir / "controller.log");
    // Exit 1: nodes failed (drains planned, not applied).
    EXPECT_EQ(WEXITSTATUS(*m_controller->exit_status()), 1) << read_file(m_dir / "controller.log");
    ASSERT_TRUE(m_fleet->wait_for(std::chrono::seconds(10)));
    EXPECT_EQ(WEXITSTATUS(*m_fleet->exit_status()), 0) << read_file(m_dir / "harness.log");
    auto harness_log = read_file(m_dir / "harness.log");
    EXPECT_NE(harness_log.find("SCALE HARNESS"), std::string::npos);
    EXPECT_NE(harness_log.find("1024 authenticated, 1024 shut down"), std::string::npos)
        << harness_log;

    auto report = json::parse(read_file(m_dir / "report" / "report.json"));
    std::set<std::string> failed;
    std::size_t passed = 0;
    for (const auto& n : report.at("nodes")) {
        auto verdict = n.at("verdict").get<std::string>();
        if (verdict == "fail") {
            failed.insert(n.at("name").get<std::string>());
        } else if (verdict == "pass") {
            ++passed;
        }
    }
    EXPECT_EQ(failed, bad);
    EXPECT_EQ(passed, 1024u - bad.size());

    // Rounds: at most three group rounds, each node in at most one group per round batch.
    std::set<int> group_rounds;
    std::size_t group_tests = 0;
    std::map<std::pair<int, std::string>, int> seen;  // (round, node) -> groups
    for (const auto& g : report.at("groups")) {
        int round = g.at("round").get<int>();
        group_rounds.insert(round);
        ++group_tests;
        for (const auto& m : g.at("members")) {
            ++seen[{round, m.get<std::string>()}];
        }
    }
    EXPECT_LE(group_rounds.size(), 3u);
    for (const auto& [key, count] : seen) {
        EXPECT_EQ(count, 1) << key.second << " is in " << count << " groups of round " << key.first;
    }
    // Pairs, then two re-pairings per suspect pair end and one confirmation per bad node: far
    // from the 1024 x 1023 / 2 all-pairs groups.
    EXPECT_LE(group_tests, 512u + 4 * bad.size());

    auto log = read_file(m_dir / "controller.log");
    EXPECT_NE(log.find("1024 of 1024 agents connected"), std::string::npos) << log;
}

// Topology-aware pairing end to end: the inventory lists racks interleaved, and round 1 must pair
// nodes of the same rack, from a Slurm topology.conf and from a node label alike.
TEST_F(ScaleHarness, RoundOnePairsStayUnderOneSwitch) {
    const int n = 64;
    std::ofstream inventory(m_dir / "inventory.yaml");
    std::ofstream topology(m_dir / "topology.conf");
    inventory << "nodes:\n";
    std::map<std::string, std::string> rack_of;
    std::map<std::string, std::vector<std::string>> racks;
    for (int i = 1; i <= n; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "v%04d", i);
        std::string rack = "r" + std::to_string(i % 4);
        rack_of[name] = rack;
        racks[rack].push_back(name);
        inventory << "  - {name: " << name << ", labels: {rack: " << rack << "}}\n";
    }
    for (const auto& [rack, members] : racks) {
        topology << "SwitchName=" << rack << " Nodes=";
        for (std::size_t i = 0; i < members.size(); ++i) {
            topology << (i ? "," : "") << members[i];
        }
        topology << "\n";
    }
    topology << "SwitchName=spine Switches=r[0-3]\n";
    inventory.close();
    topology.close();

    for (const std::string& key : {"topology_file: " + (m_dir / "topology.conf").string(),
                                   std::string("topology_label: rack")}) {
        SCOPED_TRACE(key);
        std::ofstream(m_dir / "topo.yaml")
            << "checks: [collective.gloo_allreduce]\n"
               "evaluation: {"
            << key << "}\ndeadlines: {connect_s: 30, heartbeat_s: 2, step_slack_s: 15}\n";
        int port = free_port();
        auto controller = ChildProcess::spawn(
            {k_bin_dir + "/preflight", "run", "--inventory", (m_dir / "inventory.yaml").string(),
             "--launcher", "connect", "--listen", "127.0.0.1", "--port", std::to_string(port),
             "--secret-file", m_token_file, "--config", (m_dir / "topo.yaml").string(),
             "--report-dir", (m_dir / "topo-report").string(), "--no-progress"},
            {}, (m_dir / "topo-controller.log").string());
        ASSERT_TRUE(controller) << controller.error().message;
        m_controller.emplace(std::move(controller.value()));
        auto fleet = ChildProcess::spawn(
            {k_bin_dir + "/preflight-scale-harness", "--virtual", std::to_string(n), "--controller",
             "127.0.0.1:" + std::to_string(port), "--check-ms", "50", "--secret-file", m_token_file,
             "--exit-after", "60"},
            {}, (m_dir / "topo-harness.log").string());
        ASSERT_TRUE(fleet) << fleet.error().message;
        m_fleet.emplace(std::move(fleet.value()));
        ASSERT_TRUE(m_controller->wait_for(std::chrono::seconds(60)));
        EXPECT_EQ(WEXITSTATUS(*m_controller->exit_status()), 0)
            << read_file(m_dir / "topo-controller.log");
        ASSERT_TRUE(m_fleet->wait_for(std::chrono::seconds(10)));

        auto report = json::parse(read_file(m_dir / "topo-report" / "report.json"));
        std::size_t pairs = 0;
        for (const auto& g : report.at("groups")) {
            if (g.at("round").get<int>() != 1) {
                continue;
            }
            ++pairs;
            std::set<std::string> group_racks;
            for (const auto& m : g.at("members")) {
                group_racks.insert(rack_of.at(m.get<std::string>()));
            }
            EXPECT_EQ(group_racks.size(), 1u) << g.dump();
        }
        EXPECT_EQ(pairs, static_cast<std::size_t>(n / 2));
    }
}

}  // namespace
