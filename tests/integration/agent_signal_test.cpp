// A real preflight-agent stopped by SIGTERM/SIGINT while a check's program runs: the program and
// its own child are gone (no orphan holding GPUs or ports), the agent exits 4 within a bound, and
// the running check is reported as `error` ("agent interrupted by SIGTERM") -- to a controller on
// loopback in connected mode, in the outcome file in standalone mode. The check is exec.nccl_tests
// running tests/fixtures/agent_signal/long_check.sh as all_reduce_perf.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/net/server.hpp"
#include "core/auth.hpp"
#include "core/keys.hpp"
#include "core/process.hpp"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using core::ChildProcess;
using nlohmann::json;

const std::string k_agent = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight-agent";
const std::string k_long_check =
    std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/agent_signal/long_check.sh";
constexpr const char* k_token = "signal-test-token-0123456789";
// SIGTERM, 2 s of grace, SIGKILL, the report: well inside this.
constexpr auto k_exit_bound = 8s;

// Gone, or a zombie nobody has reaped yet (its parent, the check's shell, was killed).
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0) {
        return errno == ESRCH;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
        return true;
    }
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

bool eventually_gone(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!process_gone(pid)) {
        if (Clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

class AgentSignal : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("pf-agent-signal-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        m_pid_file = (m_dir / "check.pids").string();
        // Found on $PATH under nccl-tests' own name in a directory only we can write: the form
        // of binary a node runs without an allowlist.
        fs::create_directories(m_dir / "bin");
        fs::copy_file(k_long_check, m_dir / "bin/all_reduce_perf");
        fs::permissions(m_dir / "bin/all_reduce_perf",
                        fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
    }
    void TearDown() override {
        for (pid_t pid : m_pids) {  // whatever the agent failed to stop
            ::kill(pid, SIGKILL);
        }
        fs::remove_all(m_dir);
    }

    json check_params() const {
        return {{"binary", "all_reduce_perf"}, {"json", false}, {"timeout_s", 120}};
    }
    std::map<std::string, std::string> env(bool ignore_term) const {
        const char* path = std::getenv("PATH");
        std::map<std::string, std::string> vars = {
            {"PF_TEST_PID_FILE", m_pid_file},
            {core::k_node_key_env, core::derive_node_key(k_token, "n1")},
            {"PATH", (m_dir / "bin").string() + ":" + (path != nullptr ? path : "/usr/bin:/bin")}};
        if (ignore_term) {
            vars["PF_TEST_IGNORE_TERM"] = "1";
        }
        return vars;
    }

    // The check program's pids (its child, then itself) once it is running.
    bool wait_for_check_program() {
        const auto deadline = Clock::now() + 20s;
        while (Clock::now() < deadline) {
            std::ifstream in(m_pid_file);
            pid_t pid = 0;
            while (in >> pid) {
                m_pids.push_back(pid);
            }
            if (m_pids.size() == 2) {
                return true;
            }
            m_pids.clear();
            std::this_thread::sleep_for(20ms);
        }
        return false;
    }

    // Signals the agent and returns how long it took to exit; its exit code in *code.
    std::chrono::milliseconds stop(ChildProcess& agent, int sig, int* code) {
        const auto sent = Clock::now();
        EXPECT_EQ(::kill(agent.pid(), sig), 0);
        EXPECT_TRUE(agent.wait_for(k_exit_bound + 5s)) << "the agent did not exit";
        const auto took =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
        const auto status = agent.exit_status().value_or(0);
        *code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        return took;
    }

    void expect_no_orphan() {
        ASSERT_EQ(m_pids.size(), 2u);
        for (pid_t pid : m_pids) {
            EXPECT_TRUE(eventually_gone(pid, 2s))
                << "check program " << pid << " outlived the agent";
        }
    }

    std::string log() const {
        std::ifstream in(m_dir / "agent.log");
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

    fs::path m_dir;
    std::string m_pid_file;
    std::vector<pid_t> m_pids;
};

// Standalone (Slurm prolog, init container): the outcome file still names the interrupted check.
class AgentSignalStandalone : public AgentSignal,
                              public ::testing::WithParamInterface<std::pair<int, bool>> {};

TEST_P(AgentSignalStandalone, KillsTheCheckProgramsAndWritesTheCheckAsError) {
    const auto [sig, ignore_term] = GetParam();
    const auto config = m_dir / "prolog.yaml";
    std::ofstream(config) << "checks: [exec.nccl_tests]\nparams:\n  exec.nccl_tests: "
                          << check_params().dump() << "\n";
    const auto outcome_path = m_dir / "outcome.json";
    auto agent =
        ChildProcess::spawn({k_agent, "--standalone", "--node", "n1", "--config", config.string(),
                             "--budget-s", "120", "--outcome", outcome_path.string()},
                            env(ignore_term), (m_dir / "agent.log").string());
    ASSERT_TRUE(agent.ok()) << agent.error().message;
    ASSERT_TRUE(wait_for_check_program()) << log();

    int code = -1;
    const auto took = stop(*agent, sig, &code);
    EXPECT_EQ(code, 4) << log();
    EXPECT_LT(took, k_exit_bound) << log();
    if (ignore_term) {
        EXPECT_GE(took, 1900ms) << "SIGKILL came before the grace ended";
    }
    expect_no_orphan();

    std::ifstream in(outcome_path);
    ASSERT_TRUE(in) << "no outcome written\n" << log();
    const auto outcome = json::parse(in);
    EXPECT_EQ(outcome.at("verdict"), "error");
    ASSERT_EQ(outcome.at("checks").size(), 1u);
    EXPECT_EQ(outcome["checks"][0].at("check"), "exec.nccl_tests");
    EXPECT_EQ(outcome["checks"][0].at("verdict"), "error");
    EXPECT_EQ(outcome["checks"][0].at("detail"),
              std::string("agent interrupted by ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
    EXPECT_EQ(outcome.at("drain_outcome"), "");  // an interrupted prolog never drains
}

INSTANTIATE_TEST_SUITE_P(Signals, AgentSignalStandalone,
                         ::testing::Values(std::make_pair(SIGTERM, false),
                                           std::make_pair(SIGINT, false),
                                           std::make_pair(SIGTERM, true)));

// Connected to a controller: the running step comes back as error before the agent leaves.
class AgentSignalConnected : public AgentSignal, public ::testing::WithParamInterface<bool> {};

TEST_P(AgentSignalConnected, ReportsTheRunningStepAsErrorAndKillsItsPrograms) {
    const bool ignore_term = GetParam();
    controller::HubOptions options;
    options.secret = k_token;
    options.run_id = "run-signal";
    options.expected = {"n1"};
    options.heartbeat_s = 1.0;
    controller::Server server(options, nullptr);
    ASSERT_TRUE(server.start("127.0.0.1", 0).ok());

    auto agent = ChildProcess::spawn(
        {k_agent, "--controller", "127.0.0.1:" + std::to_string(server.port()), "--node", "n1"},
        env(ignore_term), (m_dir / "agent.log").string());
    ASSERT_TRUE(agent.ok()) << agent.error().message;
    const auto joined_by = Clock::now() + 10s;
    while (server.hub().connected_nodes().count("n1") == 0 && Clock::now() < joined_by) {
        std::this_thread::sleep_for(20ms);
    }
    ASSERT_EQ(server.hub().connected_nodes().count("n1"), 1u) << log();

    controller::StepRequest request;
    request.node = "n1";
    request.check = "exec.nccl_tests";
    request.params = check_params();
    request.deadline_s = 120;
    auto outcomes = std::async(
        std::launch::async, [&] { return server.hub().run_steps({request}, Clock::now() + 60s); });
    ASSERT_TRUE(wait_for_check_program()) << log();

    int code = -1;
    const auto took = stop(*agent, SIGTERM, &code);
    EXPECT_EQ(code, 4) << log();
    EXPECT_LT(took, k_exit_bound) << log();
    expect_no_orphan();

    ASSERT_EQ(outcomes.wait_for(10s), std::future_status::ready);
    const auto results = outcomes.get();
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].lost) << results[0].result.detail;
    EXPECT_EQ(results[0].result.check, "exec.nccl_tests");
    EXPECT_EQ(results[0].result.verdict, core::Verdict::error);
    EXPECT_EQ(results[0].result.detail, "agent interrupted by SIGTERM");
    server.stop();
}

INSTANTIATE_TEST_SUITE_P(TermHonouredOrIgnored, AgentSignalConnected, ::testing::Bool());

}  // namespace
}  // namespace preflight
