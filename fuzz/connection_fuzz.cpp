// The controller's connection state machine under sequences of frames: one real controller::Server
// on loopback for the whole run (its state carries over from input to input, as a live controller's
// does), and each input a connection that plays a script of operations decoded from the bytes:
// a correct handshake for n1 or n2 (so the fuzzer gets past authentication), hellos with arbitrary
// names and macs, raw and sealed frames with arbitrary payloads, kv_set/kv_get/result messages with
// arbitrary fields, unframed bytes. The connection is then half-closed and the input ends when the
// controller has closed it. Every 256 inputs a clean agent must still authenticate: a controller
// that crashed, hung, or stopped admitting agents fails the run.
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "controller/net/server.hpp"
#include "core/agent_handshake.hpp"
#include "core/auth.hpp"
#include "core/frame_codec.hpp"
#include "core/frame_seal.hpp"
#include "core/keys.hpp"
#include "core/protocol.hpp"

namespace {

using namespace preflight;
namespace asio = boost::asio;

constexpr const char* k_secret = "connection-fuzz-secret-0123456789abcdef0123456789";

controller::Server& server() {
    static controller::Server* s = [] {
        spdlog::set_level(spdlog::level::off);
        controller::HubOptions o;
        o.secret = k_secret;
        o.run_id = "fuzz";
        o.expected = {"n1", "n2"};
        o.heartbeat_s = 0.5;
        o.hello_timeout_s = 2.0;
        // One fuzzing client makes thousands of connections a second from one address.
        o.connections_per_source_per_s = 1e9;
        o.connection_burst_per_source = 1e9;
        auto* made = new controller::Server(o);
        if (!made->start("127.0.0.1", 0).ok()) {
            std::abort();
        }
        return made;
    }();
    return *s;
}

// Reads the fuzz input front to back; past the end every read is zero.
class Bytes {
  public:
    Bytes(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
    bool done() const { return m_pos >= m_size; }
    std::uint8_t byte() { return m_pos < m_size ? m_data[m_pos++] : 0; }
    std::string text(std::size_t max) {
        std::size_t n = std::min<std::size_t>(byte() % (max + 1), m_size - std::min(m_pos, m_size));
        std::string out(reinterpret_cast<const char*>(m_data + m_pos), n);
        m_pos += n;
        return out;
    }

  private:
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

class Client {
  public:
    explicit Client(int port) : m_socket(m_io) {
        boost::system::error_code ec;
        m_socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)},
                         ec);
        m_ok = !ec;
        if (m_ok) {
            if (auto c = next(std::chrono::milliseconds(1000))) {
                if (auto* challenge = std::get_if<core::msg::Challenge>(&*c)) {
                    m_nonce = challenge->nonce;
                }
            }
        }
    }
    bool ok() const { return m_ok && !m_nonce.empty(); }

    void raw(const std::string& bytes) {
        boost::system::error_code ec;
        asio::write(m_socket, asio::buffer(bytes), ec);
    }
    void frame(const std::string& payload, bool sealed) {
        auto f = core::encode_frame(sealed && m_sealer ? m_sealer->seal(payload) : payload);
        if (f) {
            raw(*f);
        }
    }
    void message(const core::Message& m) { frame(core::serialize(m), true); }

    // The correct handshake for node; true when welcomed (frames are sealed from then on).
    // One per connection, as an agent does: a welcome can then only answer this hello, so a proof
    // that does not verify is the controller's fault (a late welcome for an earlier hello on the
    // same connection would not be).
    bool handshake(const std::string& node) {
        if (m_handshake_tried) {
            return false;
        }
        m_handshake_tried = true;
        core::AgentHandshake handshake(node, core::derive_node_key(k_secret, node));
        auto hello = handshake.answer(core::msg::Challenge{m_nonce});
        if (!hello) {
            return false;
        }
        hello->version = "fuzz";
        frame(core::serialize(hello.value()), false);
        auto reply = next(std::chrono::milliseconds(1000));
        if (!reply || !std::holds_alternative<core::msg::Welcome>(*reply)) {
            return false;
        }
        auto sealer = handshake.accept(std::get<core::msg::Welcome>(*reply));
        if (!sealer) {
            std::abort();  // the real controller's proof must verify
        }
        m_sealer = std::make_unique<core::FrameSealer>(std::move(sealer.value()));
        return true;
    }
    // Half-closes and waits (bounded) until the controller closed the connection.
    void finish() {
        boost::system::error_code ec;
        m_socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
        std::array<char, 65536> buf{};
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd pfd{m_socket.native_handle(), POLLIN, 0};
            if (::poll(&pfd, 1, 100) <= 0) {
                continue;
            }
            m_socket.read_some(asio::buffer(buf), ec);
            if (ec) {
                return;
            }
        }
        std::abort();  // the controller kept a half-closed connection open for 5 s: hung
    }

  private:
    // The next unsealed frame (the challenge, the welcome or a reject) within timeout.
    std::optional<core::Message> next(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        std::array<char, 4096> buf{};
        while (!m_decoder.has_frame() && std::chrono::steady_clock::now() < deadline) {
            pollfd pfd{m_socket.native_handle(), POLLIN, 0};
            if (::poll(&pfd, 1, 50) <= 0) {
                continue;
            }
            boost::system::error_code ec;
            const auto n = m_socket.read_some(asio::buffer(buf), ec);
            if (ec || !m_decoder.feed(std::string_view(buf.data(), n)).ok()) {
                return std::nullopt;
            }
        }
        if (!m_decoder.has_frame()) {
            return std::nullopt;
        }
        auto parsed = core::parse_message(m_decoder.pop_frame());
        return parsed ? std::optional<core::Message>(std::move(parsed.value())) : std::nullopt;
    }

    asio::io_context m_io;
    asio::ip::tcp::socket m_socket;
    core::FrameDecoder m_decoder;
    std::unique_ptr<core::FrameSealer> m_sealer;
    std::string m_nonce;
    bool m_ok = false;
    bool m_handshake_tried = false;
};

void play(Client& client, Bytes& in) {
    for (int op = 0; op < 32 && !in.done(); ++op) {
        switch (in.byte() % 8) {
            case 0:
                client.handshake(in.byte() % 2 == 0 ? "n1" : "n2");
                break;
            case 1: {
                core::msg::Hello h;
                h.node = in.text(80);
                h.version = in.text(8);
                h.agent_nonce = in.text(40);
                h.mac = in.text(70);
                client.frame(core::serialize(h), false);
                break;
            }
            case 2:
                client.frame(in.text(255), false);
                break;
            case 3:
                client.frame(in.text(255), true);
                break;
            case 4:
                client.message(core::msg::KvSet{in.text(16), in.text(64)});
                break;
            case 5:
                client.message(core::msg::KvGet{in.byte(), in.text(16), in.byte() / 1000.0});
                break;
            case 6: {
                core::msg::StepResult r;
                r.step = in.byte();
                r.result.check = in.text(20);
                client.message(r);
                break;
            }
            default:
                client.raw(in.text(64));
                break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static std::uint64_t inputs = 0;
    auto& s = server();
    {
        Client client(s.port());
        if (!client.ok()) {
            std::abort();  // the controller stopped answering connections
        }
        Bytes in(data, size);
        play(client, in);
        client.finish();
    }
    if (++inputs % 256 == 0) {
        // n1 may still be held by a connection the controller has not noticed closing; n2 or n1.
        Client probe(s.port());
        if (!probe.ok() || !probe.handshake("n1")) {
            Client again(s.port());
            if (!again.ok() || !again.handshake("n2")) {
                std::abort();  // a clean agent can no longer get in
            }
            again.finish();
        }
        probe.finish();
    }
    return 0;
}
