// A blocking client that speaks the controller's protocol by hand (frame codec, handshake, sealed
// frames), with a deadline on every read: the attacker, and the well-behaved agent, of the
// controller's socket tests.
#pragma once

#include <poll.h>

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio.hpp>

#include "core/agent_handshake.hpp"
#include "core/auth.hpp"
#include "core/frame_codec.hpp"
#include "core/frame_seal.hpp"
#include "core/keys.hpp"
#include "core/protocol.hpp"

namespace preflight::test_agents {

inline constexpr const char* k_raw_secret = "test-secret-0123456789";

// Polls pred every 10 ms until it holds or timeout passes.
inline bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// A frame's 4-byte big-endian length header.
inline std::string header(std::uint32_t n) {
    return {static_cast<char>((n >> 24) & 0xff), static_cast<char>((n >> 16) & 0xff),
            static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
}

class RawClient {
  public:
    // source: the local address to connect from (another loopback address is another peer).
    explicit RawClient(int port, const char* source = nullptr) : m_socket(m_io) {
        namespace asio = boost::asio;
        if (source != nullptr) {
            m_socket.open(asio::ip::tcp::v4());
            m_socket.bind({asio::ip::make_address(source), 0});
        }
        m_socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
        m_socket.set_option(asio::ip::tcp::no_delay(true));
    }

    // Sealed once authenticated, as a real agent's frames are.
    void send(const core::Message& message) { send_payload(core::serialize(message)); }
    void send_payload(const std::string& payload) { send_raw(frame_for(payload)); }
    // The frame send_payload would send (sealed once authenticated; that counts as sent), for
    // tests that deliver it in pieces.
    std::string frame_for(const std::string& payload) {
        return *core::encode_frame(m_sealer ? m_sealer->seal(payload) : payload);
    }
    void send_raw(const std::string& bytes) {
        boost::system::error_code ec;
        boost::asio::write(m_socket, boost::asio::buffer(bytes), ec);
    }

    // The next frame within timeout; nullopt on timeout or when the connection closed (closed()
    // tells which). Heartbeats are skipped unless keep_heartbeats.
    std::optional<core::Message> receive(std::chrono::milliseconds timeout,
                                         bool keep_heartbeats = false) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            while (m_decoder.has_frame()) {
                const std::string frame = m_decoder.pop_frame();
                std::string_view payload = frame;
                if (m_sealer) {
                    auto opened = m_sealer->open(frame);
                    EXPECT_TRUE(opened.ok()) << opened.error().message;
                    if (!opened.ok()) {
                        return std::nullopt;
                    }
                    payload = opened.value();
                }
                auto parsed = core::parse_message(payload);
                EXPECT_TRUE(parsed.ok()) << parsed.error().message;
                if (!parsed.ok()) {
                    return std::nullopt;
                }
                if (!keep_heartbeats && std::holds_alternative<core::msg::Heartbeat>(*parsed)) {
                    continue;
                }
                return std::move(parsed.value());
            }
            if (m_closed) {
                return std::nullopt;
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return std::nullopt;
            }
            pollfd pfd{m_socket.native_handle(), POLLIN, 0};
            if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
                continue;
            }
            std::array<char, 64 * 1024> buffer{};
            boost::system::error_code ec;
            std::size_t n = m_socket.read_some(boost::asio::buffer(buffer), ec);
            if (ec) {
                m_closed = true;
                continue;
            }
            EXPECT_TRUE(m_decoder.feed(std::string_view(buffer.data(), n)).ok());
        }
    }

    template <class T>
    std::optional<T> receive_as(std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
        auto m = receive(timeout);
        if (!m) {
            ADD_FAILURE() << "expected a message, got " << (m_closed ? "EOF" : "nothing");
            return std::nullopt;
        }
        if (!std::holds_alternative<T>(*m)) {
            ADD_FAILURE() << "unexpected '" << core::message_type(*m) << "'";
            return std::nullopt;
        }
        return std::get<T>(std::move(*m));
    }

    // True once the peer closed the connection within timeout; other frames are discarded.
    bool wait_closed(std::chrono::milliseconds timeout) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!m_closed && std::chrono::steady_clock::now() < deadline) {
            receive(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()),
                    true);
        }
        return m_closed;
    }

    // Reads the challenge and answers with a hello for node, keyed from secret as the controller
    // derives node keys (the agent's own handshake, core::AgentHandshake). Returns the challenge
    // nonce.
    std::string hello(const std::string& node, const std::string& secret = k_raw_secret) {
        auto challenge = receive_as<core::msg::Challenge>();
        if (!challenge) {
            return {};
        }
        m_handshake.emplace(node, core::derive_node_key(secret, node));
        auto h = m_handshake->answer(*challenge);
        EXPECT_TRUE(h.ok()) << h.error().message;
        if (!h.ok()) {
            return {};
        }
        h->version = "test";
        h->capabilities = {"link.netdev"};
        send(h.value());
        return challenge->nonce;
    }

    // hello + a welcome whose proof verifies; frames are sealed from then on.
    bool authenticate(const std::string& node, const std::string& secret = k_raw_secret) {
        hello(node, secret);
        auto welcome = receive_as<core::msg::Welcome>();
        if (!welcome || !m_handshake) {
            return false;
        }
        auto sealer = m_handshake->accept(*welcome);
        EXPECT_TRUE(sealer.ok()) << sealer.error().message;
        if (!sealer.ok()) {
            return false;
        }
        m_sealer = std::make_unique<core::FrameSealer>(std::move(sealer.value()));
        return true;
    }

    bool closed() const { return m_closed; }

  private:
    boost::asio::io_context m_io;
    boost::asio::ip::tcp::socket m_socket;
    core::FrameDecoder m_decoder;
    std::unique_ptr<core::FrameSealer> m_sealer;
    std::optional<core::AgentHandshake> m_handshake;
    bool m_closed = false;
};

}  // namespace preflight::test_agents
