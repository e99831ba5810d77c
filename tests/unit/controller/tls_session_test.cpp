// TLS between the real agent session and an in-process controller on loopback, with certificates
// made by scripts/tls_make_ca.sh (what operators run): the handshake and the HMAC challenge both
// happen, a wrong CA / wrong name / plaintext peer is refused either way, the bytes on the wire
// are not the protocol's JSON, and a bad certificate or key stops the controller at startup.
#include <poll.h>
#include <sys/socket.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "agent/session.hpp"
#include "controller/net/server.hpp"
#include "core/config.hpp"
#include "core/keys.hpp"
#include "core/process.hpp"
#include "core/tls.hpp"
#include "tests/unit/controller/local_agent.hpp"

namespace preflight::controller {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

constexpr const char* k_token = "tls-test-token-0123456789";

// Runs scripts/tls_make_ca.sh into dir (CA and controller certificate for sans...).
void make_ca(const std::string& dir, const std::vector<std::string>& sans,
             const std::vector<std::pair<std::string, std::string>>& env = {}) {
    std::vector<std::string> argv = {
        "bash", std::string(PREFLIGHT_SOURCE_DIR) + "/scripts/tls_make_ca.sh", dir};
    argv.insert(argv.end(), sans.begin(), sans.end());
    std::map<std::string, std::string> vars(env.begin(), env.end());
    auto child = core::ChildProcess::spawn(argv, vars, dir + ".log");
    ASSERT_TRUE(child.ok()) << child.error().message;
    ASSERT_TRUE(child->wait_for(30s));
    ASSERT_EQ(child->exit_status().value_or(-1), 0) << "tls_make_ca.sh failed";
}

core::TlsConfig tls_config(const std::string& dir) {
    core::TlsConfig tls;
    tls.cert = dir + "/controller.pem";
    tls.key = dir + "/controller.key";
    tls.ca = dir + "/ca.pem";
    return tls;
}

// Copies bytes both ways between one client and the server, recording what passes.
class RecordingProxy {
  public:
    explicit RecordingProxy(int server_port) : m_server_port(server_port), m_acceptor(m_io) {
        asio::ip::tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
        m_acceptor.open(ep.protocol());
        m_acceptor.bind(ep);
        m_acceptor.listen();
        m_thread = std::thread([this] { relay(); });
    }
    ~RecordingProxy() {
        m_stop = true;
        boost::system::error_code ignored;
        m_acceptor.close(ignored);
        m_thread.join();
    }
    int port() const { return m_acceptor.local_endpoint().port(); }
    std::string recorded() {
        std::lock_guard lock(m_mutex);
        return m_bytes;
    }

  private:
    void relay() {
        boost::system::error_code ec;
        asio::ip::tcp::socket client(m_io), server(m_io);
        m_acceptor.accept(client, ec);
        if (ec) {
            return;
        }
        server.connect(
            {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(m_server_port)}, ec);
        if (ec) {
            return;
        }
        pollfd fds[2] = {{client.native_handle(), POLLIN, 0}, {server.native_handle(), POLLIN, 0}};
        char buffer[16384];
        while (!m_stop) {
            if (::poll(fds, 2, 50) <= 0) {
                continue;
            }
            for (int i = 0; i < 2; ++i) {
                if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                    continue;
                }
                ssize_t n = ::recv(fds[i].fd, buffer, sizeof(buffer), 0);
                if (n <= 0) {
                    return;
                }
                {
                    std::lock_guard lock(m_mutex);
                    m_bytes.append(buffer, static_cast<std::size_t>(n));
                }
                ::send(fds[1 - i].fd, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL);
            }
        }
    }

    int m_server_port;
    asio::io_context m_io;
    asio::ip::tcp::acceptor m_acceptor;
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::string m_bytes;
};

class TlsSessionTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        spdlog::set_level(spdlog::level::warn);
        s_dir = (fs::temp_directory_path() / ("pf-tls-" + std::to_string(::getpid()))).string();
        fs::remove_all(s_dir);
        fs::create_directories(s_dir);
        make_ca(s_dir + "/ip", {"IP:127.0.0.1"});
        make_ca(s_dir + "/name", {"DNS:preflight-controller"});
        make_ca(s_dir + "/other", {"IP:127.0.0.1"});
        // Same name and address as "ip", signed by the "other" CA.
        make_ca(s_dir + "/foreign", {"IP:127.0.0.1"},
                {{"CA", s_dir + "/other/ca.pem"}, {"CA_KEY", s_dir + "/other/ca.key"}});
    }
    static void TearDownTestSuite() { fs::remove_all(s_dir); }

    void start(const std::string& cert_dir) {
        std::shared_ptr<core::TlsContext> tls;
        if (!cert_dir.empty()) {
            auto config = tls_config(s_dir + "/" + cert_dir);
            if (cert_dir == "foreign") {
                config.ca = s_dir + "/other/ca.pem";  // signed by the "other" CA
            }
            auto made = core::make_server_tls_context(config);
            ASSERT_TRUE(made.ok()) << made.error().message;
            tls = made.value();
        }
        HubOptions options;
        options.secret = k_token;
        options.run_id = "run-tls";
        options.expected = {"n1", "n2"};
        options.heartbeat_s = 1.0;
        options.hello_timeout_s = 2.0;
        m_server = std::make_unique<Server>(options, tls);
        auto st = m_server->start("127.0.0.1", 0);
        ASSERT_TRUE(st.ok()) << st.error().message;
    }
    void TearDown() override {
        if (m_server) {
            m_server->stop();
        }
    }

    agent::AgentOptions agent(const std::string& node, int port, const std::string& ca_dir) const {
        auto options = preflight::test_agents::local_agent_options(port, node, k_token, 2.0);
        if (!ca_dir.empty()) {
            options.tls_ca = s_dir + "/" + ca_dir + "/ca.pem";
        }
        return options;
    }

    bool connected(const std::string& node) {
        return m_server->hub().connected_nodes().count(node) != 0;
    }
    bool eventually_connected(const std::string& node) {
        auto deadline = Clock::now() + 5s;
        while (!connected(node)) {
            if (Clock::now() > deadline) {
                return false;
            }
            std::this_thread::sleep_for(10ms);
        }
        return true;
    }

    // An agent that must end on its own (refused): its exit code within 10 s.
    static int run_to_end(const agent::AgentOptions& options) {
        auto code = std::async(std::launch::async, [options] { return agent::run_agent(options); });
        EXPECT_EQ(code.wait_for(10s), std::future_status::ready);
        return code.get();
    }

    // An agent that joins, runs one step and is shut down: asserts all of it.
    void expect_agent_works(const agent::AgentOptions& options) {
        auto code = std::async(std::launch::async, [options] { return agent::run_agent(options); });
        ASSERT_TRUE(eventually_connected(options.node));
        StepRequest req;
        req.node = options.node;
        req.check = "link.netdev";
        req.deadline_s = 5.0;
        req.params = {{"interfaces", nlohmann::json::array()}};
        auto outcomes = m_server->hub().run_steps({req}, Clock::now() + 6s);
        ASSERT_EQ(outcomes.size(), 1u);
        EXPECT_FALSE(outcomes[0].lost) << outcomes[0].result.detail;
        EXPECT_EQ(outcomes[0].result.check, "link.netdev");
        m_server->stop();
        ASSERT_EQ(code.wait_for(5s), std::future_status::ready);
        EXPECT_EQ(code.get(), agent::k_agent_ok);
    }

    static inline std::string s_dir;
    std::unique_ptr<Server> m_server;
};

TEST_F(TlsSessionTest, AgentVerifiesTheControllerByAddressAndRunsAStep) {
    start("ip");
    expect_agent_works(agent("n1", m_server->port(), "ip"));
}

TEST_F(TlsSessionTest, ServerNameOverridesTheAddressDialed) {
    start("name");
    auto options = agent("n1", m_server->port(), "name");
    // The certificate names only preflight-controller: dialing 127.0.0.1 fails without the name.
    EXPECT_EQ(run_to_end(options), agent::k_agent_rejected);
    options.tls_server_name = "preflight-controller";
    expect_agent_works(options);
}

TEST_F(TlsSessionTest, AgentRefusesAControllerFromAnotherCaAtOnce) {
    start("foreign");
    auto began = Clock::now();
    EXPECT_EQ(run_to_end(agent("n1", m_server->port(), "ip")), agent::k_agent_rejected);
    EXPECT_LT(Clock::now() - began, 1500ms) << "a failed certificate must not be retried";
    EXPECT_FALSE(connected("n1"));
}

TEST_F(TlsSessionTest, AgentRefusesACertificateForAnotherName) {
    start("ip");
    auto options = agent("n1", m_server->port(), "ip");
    options.tls_server_name = "preflight-controller";
    EXPECT_EQ(run_to_end(options), agent::k_agent_rejected);
    EXPECT_FALSE(connected("n1"));
}

TEST_F(TlsSessionTest, PlaintextAgentIsRefusedAndTheControllerKeepsServing) {
    start("ip");
    EXPECT_EQ(run_to_end(agent("n1", m_server->port(), "")), agent::k_agent_failed);
    EXPECT_FALSE(connected("n1"));
    expect_agent_works(agent("n2", m_server->port(), "ip"));
}

TEST_F(TlsSessionTest, TlsAgentGivesUpOnAPlaintextController) {
    start("");
    EXPECT_EQ(run_to_end(agent("n1", m_server->port(), "ip")), agent::k_agent_failed);
    EXPECT_FALSE(connected("n1"));
}

TEST_F(TlsSessionTest, ACaFileThatIsNoCaIsAUsageError) {
    start("ip");
    auto options = agent("n1", m_server->port(), "ip");
    options.tls_ca = s_dir + "/ip/controller.key";
    EXPECT_EQ(run_to_end(options), agent::k_agent_usage);
    EXPECT_FALSE(connected("n1"));
}

TEST_F(TlsSessionTest, WrongTokenIsStillRejectedInsideTls) {
    start("ip");
    auto options = agent("n1", m_server->port(), "ip");
    options.node_key = core::derive_node_key("not-the-secret", "n1");
    EXPECT_EQ(run_to_end(options), agent::k_agent_rejected);
    EXPECT_FALSE(connected("n1"));
}

// What passes on the wire: with TLS none of the protocol's JSON is readable; without it, the same
// proxy sees the hello (so the check can fail).
TEST_F(TlsSessionTest, NothingReadableOnTheWire) {
    for (bool tls : {false, true}) {
        SCOPED_TRACE(tls ? "tls" : "plain");
        start(tls ? "ip" : "");
        RecordingProxy proxy(m_server->port());
        expect_agent_works(agent("n1", proxy.port(), tls ? "ip" : ""));
        const std::string wire = proxy.recorded();
        EXPECT_GT(wire.size(), 200u);
        for (const char* text : {"\"hello\"", "link.netdev", "run-tls", "\"n1\""}) {
            if (tls) {
                EXPECT_EQ(wire.find(text), std::string::npos) << text << " readable on the wire";
            } else {
                EXPECT_NE(wire.find(text), std::string::npos) << text;
            }
        }
        m_server.reset();
    }
}

TEST(TlsContextTest, BadKeyCertificateOrNameStopsTheControllerAtStartup) {
    const std::string dir =
        (fs::temp_directory_path() / ("pf-tls-ctx-" + std::to_string(::getpid()))).string();
    fs::remove_all(dir);
    fs::create_directories(dir);
    make_ca(dir + "/a", {"IP:127.0.0.1", "DNS:ctl.example"});
    make_ca(dir + "/b", {"IP:127.0.0.1"});

    ASSERT_TRUE(core::make_server_tls_context(tls_config(dir + "/a")).ok());

    auto mismatched = tls_config(dir + "/a");
    mismatched.key = dir + "/b/controller.key";
    auto r1 = core::make_server_tls_context(mismatched);
    ASSERT_FALSE(r1.ok());
    EXPECT_THAT(r1.error().message, HasSubstr("does not match controller.tls.cert"));

    auto foreign = tls_config(dir + "/a");
    foreign.ca = dir + "/b/ca.pem";
    auto r2 = core::make_server_tls_context(foreign);
    ASSERT_FALSE(r2.ok());
    EXPECT_THAT(r2.error().message, HasSubstr("does not verify against controller.tls.ca"));

    auto not_pem = tls_config(dir + "/a");
    not_pem.cert = dir + "/a.log";
    auto r3 = core::make_server_tls_context(not_pem);
    ASSERT_FALSE(r3.ok());
    EXPECT_THAT(r3.error().message, HasSubstr("controller.tls.cert: cannot load"));

    // The names agents would check (the controller refuses to start with a certificate they
    // would refuse: orchestrator.cpp check_tls_names).
    EXPECT_TRUE(core::check_certificate_name(dir + "/a/controller.pem", "127.0.0.1").ok());
    EXPECT_TRUE(core::check_certificate_name(dir + "/a/controller.pem", "ctl.example").ok());
    EXPECT_FALSE(core::check_certificate_name(dir + "/a/controller.pem", "127.0.0.2").ok());
    EXPECT_FALSE(core::check_certificate_name(dir + "/a/controller.pem", "other.example").ok());
    EXPECT_FALSE(core::check_certificate_name(dir + "/a/ca.pem", "127.0.0.1").ok());

    auto client = core::make_client_tls_context(dir + "/a/controller.key");
    ASSERT_FALSE(client.ok());
    EXPECT_THAT(client.error().message, HasSubstr("--tls-ca: cannot load"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace preflight::controller
