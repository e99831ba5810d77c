// The protocol-abuse suite: a real `preflight run --launcher connect` controller is attacked over
// real sockets while three real agents join and the run completes. The attacks, one after
// another while the agents join (the silent connections held throughout):
//   random bytes, a 4 GiB length header, a non-JSON frame, a wrong-typed hello, deeply nested
//   JSON, a wrong HMAC, a hello replayed on another connection, node names with newlines and
//   paths, 300 silent connections, a slow-loris hello; then an authenticated node (n4, played by
//   the test with its real key, whose joining starts the run) parks kv_get waiters and sets a
//   700 KiB value (the fan-out that once crashed the controller) while the run goes on.
// Expected: each attacked connection is closed within its deadline; the controller never crashes
// and its RSS stays under 200 MiB; no forged line reaches its log; n1-n3 pass, n4 is `error`
// and the report is written. A real agent dialling a fake controller that asks it to run a
// program refuses it and the program never runs.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "core/keys.hpp"
#include "core/process.hpp"
#include "tests/sanitizers/slowdown.hpp"
#include "tests/unit/controller/raw_client.hpp"

namespace preflight {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using test_agents::header;
using test_agents::RawClient;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";
const std::string k_secret = "9e8d7c6b5a4938271605f4e3d2c1b0a99e8d7c6b5a4938271605f4e3d2c1b0a9";
constexpr double k_hello_timeout_s = 10.0;  // the controller's (controller/run/stages_prepare.cpp)
// The controller's own bound; a sanitized build adds its quarantine and shadow memory.
constexpr long k_rss_bound_kib = 200 * 1024 + test_timing::k_sanitizer_extra_rss_kib;
// Attackers come from their own loopback addresses, as they would from their own hosts: the
// controller limits unauthenticated connections per source, and the agents dial from 127.0.0.1.
constexpr const char* k_flood_source = "127.0.0.3";
constexpr const char* k_attacker = "127.0.0.2";
constexpr const char* k_bad_node = "127.0.0.4";

int free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    return acceptor.local_endpoint().port();
}

long rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

// Seconds from now until the controller closed client's connection (-1: not within limit).
double seconds_to_close(RawClient& client, std::chrono::milliseconds limit) {
    const auto start = Clock::now();
    if (!client.wait_closed(limit)) {
        return -1.0;
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
}

class ProtocolAbuse : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() / ("pf-abuse-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
        ::chmod(m_dir.c_str(), 0755);
        m_secret_file = (m_dir / "secret").string();
        std::ofstream(m_secret_file) << k_secret << "\n";
        ::chmod(m_secret_file.c_str(), 0600);
        // connect_s covers the attacks (the slow-loris needs the hello timeout): the run starts
        // when n4, played by the test, joins after them.
        std::ofstream(m_dir / "config.yaml") << "checks: [link.netdev]\n"
                                                "deadlines: {connect_s: 40}\n";
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    core::ChildProcess agent(const std::string& node, int port) {
        auto child = core::ChildProcess::spawn(
            {k_bin_dir + "/preflight-agent", "--controller", "127.0.0.1:" + std::to_string(port),
             "--node", node},
            {{"PREFLIGHT_NODE_KEY", core::derive_node_key(k_secret, node)}},
            (m_dir / (node + ".log")).string());
        EXPECT_TRUE(child) << child.error().message;
        return std::move(child.value());
    }

    std::filesystem::path m_dir;
    std::string m_secret_file;
};

TEST_F(ProtocolAbuse, AttacksOnALiveControllerCloseOnlyTheAttackersAndTheRunEnds) {
    const int port = free_port();
    auto controller = core::ChildProcess::spawn(
        {k_bin_dir + "/preflight", "run", "--nodes", "n[1-4]", "--launcher", "connect", "--listen",
         "127.0.0.1", "--port", std::to_string(port), "--secret-file", m_secret_file, "--config",
         (m_dir / "config.yaml").string(), "--report-dir", (m_dir / "report").string(),
         "--no-progress"},
        {}, (m_dir / "controller.log").string());
    ASSERT_TRUE(controller) << controller.error().message;
    const pid_t pid = controller->pid();
    ASSERT_TRUE(test_agents::eventually(
        [&] {
            boost::asio::io_context io;
            boost::asio::ip::tcp::socket s(io);
            boost::system::error_code ec;
            s.connect(
                {boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)},
                ec);
            return !ec;
        },
        10s));

    std::atomic<bool> attacking{true};
    std::atomic<long> max_rss{0};
    std::thread sampler([&] {
        while (attacking) {
            max_rss = std::max(max_rss.load(), rss_kib(pid));
            std::this_thread::sleep_for(50ms);
        }
    });

    // 300 silent connections, held through the attack.
    std::vector<std::unique_ptr<RawClient>> silent;
    for (int i = 0; i < 300; ++i) {
        silent.push_back(std::make_unique<RawClient>(port, k_flood_source));
    }
    // The real agents join meanwhile.
    std::vector<core::ChildProcess> agents;
    for (const char* node : {"n1", "n2", "n3"}) {
        agents.push_back(agent(node, port));
    }

    std::map<std::string, double> closed_after;  // attack -> seconds until closed
    const auto attack = [&](const std::string& name, const std::function<void(RawClient&)>& send,
                            std::chrono::milliseconds limit = 3s) {
        RawClient client(port, k_attacker);
        send(client);
        closed_after[name] = seconds_to_close(client, limit);
    };
    std::mt19937 rng(7);
    attack("random bytes", [&](RawClient& c) {
        std::string bytes(64 * 1024, '\0');
        for (auto& b : bytes) {
            b = static_cast<char>(rng());
        }
        c.send_raw(bytes);
    });
    attack("4 GiB length header", [](RawClient& c) { c.send_raw(header(0xffffffffu)); });
    attack("non-JSON frame", [](RawClient& c) { c.send_raw(header(9) + "not json!"); });
    attack("wrong-typed hello", [](RawClient& c) {
        c.send_payload(R"({"v":2,"type":"hello","node":5,"version":[],"mac":{}})");
    });
    attack("deeply nested JSON",
           [](RawClient& c) { c.send_payload(std::string(40000, '[') + std::string(40000, ']')); });
    attack("wrong HMAC", [](RawClient& c) { c.hello("n1", std::string(64, '7')); });
    attack("replayed hello", [&](RawClient& c) {
        // n2's hello, correct for another connection's challenge, sent on this one.
        RawClient first(port, k_attacker);
        auto challenge = first.receive_as<core::msg::Challenge>();
        core::msg::Hello h;
        h.node = "n2";
        h.version = "x";
        h.agent_nonce = std::string(32, 'a');
        h.mac = core::hello_mac(core::derive_node_key(k_secret, "n2"), challenge->nonce,
                                h.agent_nonce, "n2");
        c.receive_as<core::msg::Challenge>();
        c.send(h);
    });
    attack("newline node name", [](RawClient& c) {
        c.hello("n1\n12:00:00.000 [warn] FORGED: node n2 drained", k_secret);
    });
    attack("path-like node name", [](RawClient& c) { c.hello("../../etc/passwd", k_secret); });

    // The slow-loris: a hello header, then a byte a second, never complete.
    {
        RawClient loris(port, k_attacker);
        loris.send_raw(header(4000));
        const auto start = Clock::now();
        while (!loris.closed() && Clock::now() - start < 20s) {
            loris.send_raw("{");
            loris.wait_closed(1s);
        }
        closed_after["slow-loris hello"] =
            loris.closed() ? std::chrono::duration<double>(Clock::now() - start).count() : -1.0;
    }

    // By now (past the hello deadline) every silent connection is closed: those over the
    // per-source limit at once, the others at their hello deadline.
    int silent_closed = 0;
    for (auto& c : silent) {
        silent_closed += c->wait_closed(2s) ? 1 : 0;
    }
    EXPECT_EQ(silent_closed, 300);
    std::printf("300 silent connections: %d closed\n", silent_closed);

    // Still running: the run waits for n4, which joins only now.
    ASSERT_FALSE(controller->wait_for(0ms)) << "the controller ended during the attacks";
    EXPECT_EQ(::kill(pid, 0), 0);

    // The kv fan-out, by the last node, which authenticates with its real key and then misbehaves.
    {
        RawClient n4(port, k_bad_node);
        ASSERT_TRUE(n4.authenticate("n4", k_secret));
        for (std::uint64_t i = 0; i < 12; ++i) {
            n4.send(core::msg::KvGet{i, "big", 30.0});
        }
        std::this_thread::sleep_for(200ms);
        n4.send(core::msg::KvSet{"big", std::string(700 * 1024, 'A')});
        closed_after["kv fan-out over the write bound"] = seconds_to_close(n4, 5s);
    }

    for (const auto& [name, seconds] : closed_after) {
        std::printf("%-32s closed after %.2f s\n", name.c_str(), seconds);
        EXPECT_GE(seconds, 0.0) << name << ": not closed";
        if (name == "slow-loris hello") {
            // Closed at the hello deadline counted from the accept, whatever it trickles.
            EXPECT_GE(seconds, k_hello_timeout_s - 1.0) << name;
            EXPECT_LE(seconds, k_hello_timeout_s + 3.0) << name;
        } else {
            EXPECT_LE(seconds, 3.0) << name;
        }
    }

    ASSERT_TRUE(controller->wait_for(90s)) << "the run did not end";
    attacking = false;
    sampler.join();
    ASSERT_TRUE(controller->exit_status().has_value());
    ASSERT_TRUE(WIFEXITED(*controller->exit_status())) << "the controller crashed";
    EXPECT_EQ(WEXITSTATUS(*controller->exit_status()), 4);  // n4 could not be judged
    EXPECT_GT(max_rss.load(), 0);
    EXPECT_LT(max_rss.load(), k_rss_bound_kib) << "controller RSS peaked at " << max_rss << " KiB";
    std::printf("controller RSS peak under attack: %.1f MiB\n",
                static_cast<double>(max_rss.load()) / 1024.0);

    std::ifstream in(m_dir / "report" / "report.json");
    ASSERT_TRUE(in.good()) << "no report";
    const auto report = json::parse(in);
    std::map<std::string, std::string> verdicts;
    for (const auto& n : report.at("nodes")) {
        verdicts[n.at("name").get<std::string>()] = n.at("verdict").get<std::string>();
    }
    EXPECT_EQ(verdicts, (std::map<std::string, std::string>{
                            {"n1", "pass"}, {"n2", "pass"}, {"n3", "pass"}, {"n4", "error"}}));

    std::ifstream log(m_dir / "controller.log");
    std::string line;
    int lines = 0;
    while (std::getline(log, line)) {
        ++lines;
        EXPECT_EQ(line.rfind("12:00:00.000", 0), std::string::npos) << "forged line: " << line;
        EXPECT_EQ(line.find("FORGED"), std::string::npos) << "peer text logged: " << line;
        EXPECT_LE(line.size(), 2048u) << line.substr(0, 120);
    }
    EXPECT_GT(lines, 0);
    for (auto& a : agents) {
        ASSERT_TRUE(a.wait_for(10s));
        EXPECT_EQ(WEXITSTATUS(*a.exit_status()), 0);  // told to shut down
    }
}

// A real preflight-agent dials a fake controller that does not hold the node's key and asks it to
// run a program under an nccl-tests name: the agent refuses the controller and nothing runs.
TEST_F(ProtocolAbuse, AnAgentDiallingAFakeControllerRunsNothing) {
    const auto program = (m_dir / "all_reduce_perf").string();
    const auto marker = (m_dir / "ran").string();
    std::ofstream(program) << "#!/bin/sh\ntouch '" << marker << "'\n";
    ::chmod(program.c_str(), 0755);

    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    const int port = acceptor.local_endpoint().port();
    auto real_agent = agent("n1", port);
    auto socket = acceptor.accept();
    const auto send = [&](const core::Message& m) {
        boost::system::error_code ec;
        boost::asio::write(socket, boost::asio::buffer(*core::encode_frame(core::serialize(m))),
                           ec);
    };
    send(core::msg::Challenge{core::random_hex(16)});
    std::array<char, 4096> buf{};
    boost::system::error_code ec;
    socket.read_some(boost::asio::buffer(buf), ec);  // the hello
    ASSERT_FALSE(ec) << ec.message();
    send(core::msg::Welcome{"fake-run", 1.0, std::string(64, '0')});
    core::msg::Run run;
    run.step = 1;
    run.check = "exec.nccl_tests";
    run.params = {{"binary", program}, {"json", false}};
    run.deadline_s = 5.0;
    send(run);
    ASSERT_TRUE(real_agent.wait_for(10s));
    EXPECT_EQ(WEXITSTATUS(*real_agent.exit_status()), 4);
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the fake controller's program ran";
    std::ifstream log(m_dir / "n1.log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    EXPECT_NE(text.find("refusing controller"), std::string::npos) << text;
}

}  // namespace
}  // namespace preflight
