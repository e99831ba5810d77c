// A real agent session dialling a fake controller (a port squatter, or a machine in the path) that
// tries to make it run a program. The agent must refuse every such peer and run nothing: it only
// accepts a run after the controller proved it holds this node's key.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "agent/session.hpp"
#include "agent/step_runner.hpp"
#include "core/auth.hpp"
#include "core/frame_codec.hpp"
#include "core/keys.hpp"
#include "core/protocol.hpp"
#include "tests/unit/controller/local_agent.hpp"

namespace preflight::agent {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

const std::string k_secret = "the-real-cluster-secret-0123456789abcdef";

// One connection, blocking, on loopback: sends frames as a controller would and reads the agent's.
class FakeController {
  public:
    FakeController() : m_acceptor(m_io, {asio::ip::make_address("127.0.0.1"), 0}) {}
    int port() const { return m_acceptor.local_endpoint().port(); }

    void accept() { m_socket.emplace(m_acceptor.accept()); }
    // An accept that gives up: false when no agent dialed within timeout.
    bool accept_within(std::chrono::milliseconds timeout) {
        m_acceptor.non_blocking(true);
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            boost::system::error_code ec;
            auto socket = m_acceptor.accept(ec);
            if (!ec) {
                socket.non_blocking(false);
                m_socket.emplace(std::move(socket));
                m_decoder = core::FrameDecoder{};
                return true;
            }
            std::this_thread::sleep_for(5ms);
        }
        return false;
    }
    void close() { m_socket.reset(); }
    void send(const core::Message& m) {
        boost::system::error_code ec;
        asio::write(*m_socket, asio::buffer(*core::encode_frame(core::serialize(m))), ec);
    }
    std::optional<core::Message> receive(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!m_decoder.has_frame() && std::chrono::steady_clock::now() < deadline) {
            if (m_socket->available() == 0) {
                std::this_thread::sleep_for(5ms);
                continue;
            }
            std::array<char, 4096> buf{};
            boost::system::error_code ec;
            const auto n = m_socket->read_some(asio::buffer(buf), ec);
            if (ec) {
                return std::nullopt;
            }
            EXPECT_TRUE(m_decoder.feed(std::string_view(buf.data(), n)).ok());
        }
        if (!m_decoder.has_frame()) {
            return std::nullopt;
        }
        auto parsed = core::parse_message(m_decoder.pop_frame());
        return parsed ? std::optional<core::Message>(std::move(parsed.value())) : std::nullopt;
    }

  private:
    asio::io_context m_io;
    asio::ip::tcp::acceptor m_acceptor;
    std::optional<asio::ip::tcp::socket> m_socket;
    core::FrameDecoder m_decoder;
};

class FakeControllerTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { spdlog::set_level(spdlog::level::off); }
    void SetUp() override {
        char templ[] = "/tmp/pf-fake-controller-XXXXXX";
        ASSERT_NE(::mkdtemp(templ), nullptr);
        m_dir = templ;
        ::chmod(m_dir.c_str(), 0755);
        // What the attacker wants run: a program under an nccl-tests name in a trusted
        // directory, so only the handshake stands between it and root.
        m_program = (m_dir / "all_reduce_perf").string();
        std::ofstream(m_program) << "#!/bin/sh\ntouch '" << marker() << "'\n";
        ::chmod(m_program.c_str(), 0755);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    std::string marker() const { return (m_dir / "ran").string(); }

    std::future<int> start_agent(int port) {
        return std::async(std::launch::async, [port] {
            return run_agent(test_agents::local_agent_options(port, "n1", k_secret, 3.0));
        });
    }
    core::msg::Run attack() const {
        core::msg::Run run;
        run.step = 1;
        run.check = "exec.nccl_tests";
        run.params = {{"binary", m_program}, {"json", false}};
        run.deadline_s = 5.0;
        return run;
    }

    std::filesystem::path m_dir;
    std::string m_program;
};

// The control: the same run, asked of this node's check directly under the agent's default
// policy, does run the program, so in the tests below only the handshake stops it.
TEST_F(FakeControllerTest, TheAttackersProgramWouldRunIfTheRunWereAccepted) {
    core::msg::Run run = attack();
    StepEnvironment env{"n1", "/", "127.0.0.1", nullptr, nullptr, nullptr};
    auto result = run_step(run, env, std::chrono::steady_clock::now() + 5s);
    EXPECT_TRUE(std::filesystem::exists(marker())) << result.detail;
}

TEST_F(FakeControllerTest, AWelcomeWithoutTheProofIsRefusedAndNothingRuns) {
    FakeController fake;
    auto code = start_agent(fake.port());
    fake.accept();
    fake.send(core::msg::Challenge{core::random_hex(16)});
    auto hello = fake.receive(3s);
    ASSERT_TRUE(hello && std::holds_alternative<core::msg::Hello>(*hello));
    // It does not hold n1's key: a proof under another secret, then the program to run.
    const auto& h = std::get<core::msg::Hello>(*hello);
    fake.send(core::msg::Welcome{"run-x", 1.0,
                                 core::welcome_proof(core::derive_node_key("guess", "n1"),
                                                     "whatever", h.agent_nonce, "n1", "run-x")});
    fake.send(attack());
    ASSERT_EQ(code.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(code.get(), k_agent_rejected);
    std::this_thread::sleep_for(200ms);
    EXPECT_FALSE(std::filesystem::exists(marker())) << "the fake controller's program ran";
}

TEST_F(FakeControllerTest, ARunBeforeAnyWelcomeIsRefusedAndNothingRuns) {
    FakeController fake;
    auto code = start_agent(fake.port());
    fake.accept();
    fake.send(core::msg::Challenge{core::random_hex(16)});
    ASSERT_TRUE(fake.receive(3s).has_value());
    fake.send(attack());
    ASSERT_EQ(code.wait_for(10s), std::future_status::ready);
    EXPECT_NE(code.get(), k_agent_ok);
    std::this_thread::sleep_for(200ms);
    EXPECT_FALSE(std::filesystem::exists(marker()));
}

// A controller that closes the connection before its welcome (as one shedding unauthenticated
// connections under a flood from this node's address does) is dialed again, and the handshake
// starts over; with no welcome by the connect deadline the agent ends unreached, having run
// nothing.
TEST_F(FakeControllerTest, AConnectionClosedBeforeTheWelcomeIsDialedAgain) {
    auto fake = std::make_unique<FakeController>();
    auto code = start_agent(fake->port());
    ASSERT_TRUE(fake->accept_within(3s));
    fake->send(core::msg::Challenge{core::random_hex(16)});
    ASSERT_TRUE(fake->receive(3s).has_value());
    fake->close();
    ASSERT_TRUE(fake->accept_within(3s)) << "the agent did not dial again";
    fake->send(core::msg::Challenge{core::random_hex(16)});
    auto hello = fake->receive(3s);
    ASSERT_TRUE(hello.has_value());
    EXPECT_TRUE(std::holds_alternative<core::msg::Hello>(*hello));
    fake.reset();  // gone: the agent's dials are refused until its 3 s connect deadline
    ASSERT_EQ(code.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(code.get(), k_agent_failed);
    EXPECT_FALSE(std::filesystem::exists(marker()));
}

TEST_F(FakeControllerTest, AReplayedWelcomeFromAnotherSessionIsRefused) {
    // The real controller's proof for one session does not open another: both nonces differ.
    const std::string key = core::derive_node_key(k_secret, "n1");
    const auto replayed =
        core::welcome_proof(key, std::string(32, 'c'), std::string(32, 'a'), "n1", "run-x");
    FakeController fake;
    auto code = start_agent(fake.port());
    fake.accept();
    fake.send(core::msg::Challenge{std::string(32, 'c')});
    ASSERT_TRUE(fake.receive(3s).has_value());
    fake.send(core::msg::Welcome{"run-x", 1.0, replayed});
    fake.send(attack());
    ASSERT_EQ(code.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(code.get(), k_agent_rejected);
    EXPECT_FALSE(std::filesystem::exists(marker()));
}

}  // namespace
}  // namespace preflight::agent
