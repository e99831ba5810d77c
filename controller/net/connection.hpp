// One agent connection on the controller's I/O thread: framed reads with the codec, a bounded write
// queue, and close-on-error. A malformed or oversized frame closes this connection only. All
// methods must be called on the I/O thread (the io_context's single thread).
// Plain TCP reads wait for readiness and then drain the socket into one buffer shared by every
// connection of the thread, so an idle connection holds no read buffer (4096 agents x 64 KiB was
// 256 MiB). A TLS connection first completes the server handshake (frames queued meanwhile wait),
// then reads through the TLS layer into a small buffer of its own.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio.hpp>

#include "controller/net/peer_limits.hpp"
#include "core/frame_codec.hpp"
#include "core/frame_seal.hpp"
#include "core/protocol.hpp"
#include "core/stream.hpp"

namespace preflight::controller {

class Connection;
using ConnectionPtr = std::shared_ptr<Connection>;

class ConnectionHandler {
  public:
    virtual ~ConnectionHandler() = default;
    virtual void on_message(const ConnectionPtr& conn, core::Message message) = 0;
    virtual void on_closed(const ConnectionPtr& conn, const std::string& reason) = 0;
    // An unauthenticated peer's frame declares another protocol version (reason, as the peer
    // sent it, unescaped, names both sides). The handler must close the connection.
    virtual void on_incompatible(const ConnectionPtr& conn, const std::string& reason) = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
  public:
    // Queued but unsent bytes above this mean the agent stopped reading: close it.
    static constexpr std::size_t k_max_queued_bytes = 8u << 20;

    Connection(core::Stream stream, ConnectionHandler& handler);

    void start();
    void send(const core::Message& message);
    // Sends one message payload (serialized JSON), sealed once the connection is authenticated.
    void send_payload(std::string_view payload);
    // From now on every frame sent is sealed and every frame received must be (after the welcome).
    void seal_from_now(core::FrameSealer sealer);
    void close(const std::string& reason);
    // Sends message, then closes once it has been written (a rejection the peer should read).
    void send_and_close(const core::Message& message, const std::string& reason);

    bool open() const { return m_open; }
    // The peer failed the TLS handshake (a plaintext agent, a scanner): the operator should hear.
    bool tls_refused() const { return m_tls_refused; }
    const std::string& peer() const { return m_peer; }
    std::chrono::steady_clock::time_point last_received() const { return m_last_received; }
    // When a frame was last queued for the peer (any frame tells the peer we are alive).
    std::chrono::steady_clock::time_point last_sent() const { return m_last_sent; }
    // When the connection was accepted: the hello deadline counts from here, not from the last
    // byte, so a peer trickling a byte at a time cannot hold a connection open.
    std::chrono::steady_clock::time_point accepted_at() const { return m_accepted_at; }
    // When the first byte of the frame still incomplete was read; empty between frames. The frame
    // deadline counts from here, for the same reason.
    std::optional<std::chrono::steady_clock::time_point> partial_frame_since() const {
        return m_partial_since;
    }
    // The peer's address; unspecified when it could not be read.
    const boost::asio::ip::address& source() const { return m_source; }

    // The largest frame this peer may announce from now on, and the budget its partial frames
    // count against (not owned; must outlive the connection's open life). A frame over the limit,
    // or a read that would take the budget past its cap, closes the connection.
    void limit_frames(std::size_t max_frame, PartialFrameBudget* budget);

    // Set by the handler once authenticated; empty before.
    std::string node;
    std::string nonce;
    bool authenticated = false;
    // The handler counted this connection against its source's unauthenticated limit.
    bool holds_source_slot = false;

  private:
    void read_more();
    void on_readable();
    void read_tls();
    // Decodes and dispatches what was read (self: the caller's reference, handed to the handler);
    // false when the connection was closed.
    bool consume(const std::shared_ptr<Connection>& self, std::string_view data);
    // Accounts for what the decoder holds after a read; false (and closed) when over the budget.
    bool account_partial_frame();
    void write_next();
    void send_frame(std::shared_ptr<const std::string> frame);

    core::Stream m_stream;
    std::unique_ptr<std::array<char, 4096>> m_tls_buffer;  // TLS connections only
    ConnectionHandler& m_handler;
    core::FrameDecoder m_decoder;
    std::unique_ptr<core::FrameSealer> m_sealer;  // set once authenticated
    std::deque<std::shared_ptr<const std::string>> m_write_queue;
    std::size_t m_queued_bytes = 0;
    bool m_writing = false;
    bool m_open = true;
    bool m_tls_refused = false;
    std::string m_close_after_write;  // non-empty: close with this reason when the queue drains
    std::string m_peer;
    boost::asio::ip::address m_source;
    std::chrono::steady_clock::time_point m_last_received;
    std::chrono::steady_clock::time_point m_last_sent;
    std::chrono::steady_clock::time_point m_accepted_at;
    std::optional<std::chrono::steady_clock::time_point> m_partial_since;
    std::uint64_t m_partial_frame = 0;  // the decoder's frames_decoded() when it began
    PartialFrameBudget* m_budget = nullptr;
    PartialFrameBudget::Share m_budget_share;
};

}  // namespace preflight::controller
