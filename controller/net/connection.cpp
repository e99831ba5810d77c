#include "controller/net/connection.hpp"

#include <array>

#include <spdlog/spdlog.h>

#include "core/log_text.hpp"

namespace preflight::controller {

namespace asio = boost::asio;

Connection::Connection(core::Stream stream, ConnectionHandler& handler)
    : m_stream(std::move(stream)),
      m_handler(handler),
      m_last_received(std::chrono::steady_clock::now()),
      m_accepted_at(m_last_received) {
    boost::system::error_code ec;
    auto remote = m_stream.socket().remote_endpoint(ec);
    m_peer =
        ec ? std::string("?") : remote.address().to_string() + ":" + std::to_string(remote.port());
    if (!ec) {
        m_source = remote.address();
    }
    m_stream.socket().set_option(asio::ip::tcp::no_delay(true), ec);
}

namespace {

// One read buffer for every connection: all of them run on the single I/O thread and a read
// completes synchronously into it, so it is never shared by two reads at once.
std::array<char, 64 * 1024>& shared_read_buffer() {
    thread_local std::array<char, 64 * 1024> buffer;
    return buffer;
}

}  // namespace

void Connection::start() {
    if (auto* tls = m_stream.tls()) {
        // Frames queued before the handshake completes (the challenge) wait for it.
        m_writing = true;
        auto self = shared_from_this();
        tls->async_handshake(
            asio::ssl::stream_base::server, [this, self](boost::system::error_code ec) {
                if (!m_open) {
                    return;
                }
                if (ec) {
                    m_tls_refused = true;
                    std::string why = core::take_openssl_error();
                    close("TLS handshake failed: " + (why.empty() ? ec.message() : why));
                    return;
                }
                m_tls_buffer = std::make_unique<std::array<char, 4096>>();
                write_next();
                read_tls();
            });
        return;
    }
    boost::system::error_code ec;
    m_stream.socket().non_blocking(true, ec);
    if (ec) {
        close("cannot make the socket non-blocking: " + ec.message());
        return;
    }
    read_more();
}

void Connection::read_tls() {
    auto self = shared_from_this();
    m_stream.async_read_some(
        asio::buffer(*m_tls_buffer), [this, self](boost::system::error_code ec, std::size_t n) {
            if (!m_open) {
                return;
            }
            if (ec) {
                close(core::is_stream_end(ec) ? "connection closed by peer"
                                              : "read failed: " + ec.message());
                return;
            }
            if (consume(self, std::string_view(m_tls_buffer->data(), n))) {
                read_tls();
            }
        });
}

void Connection::limit_frames(std::size_t max_frame, PartialFrameBudget* budget) {
    m_decoder.set_max_frame(max_frame);
    if (budget != m_budget && m_budget != nullptr) {
        m_budget->release(m_budget_share);
    }
    m_budget = budget;
}

bool Connection::consume(const std::shared_ptr<Connection>& self, std::string_view data) {
    m_last_received = std::chrono::steady_clock::now();
    if (auto st = m_decoder.feed(data); !st) {
        close("bad frame: " + st.error().message +
              (authenticated ? std::string() : std::string(" (before authentication)")));
        return false;
    }
    if (!account_partial_frame()) {
        return false;
    }
    while (m_open && m_decoder.has_frame()) {
        const std::string frame = m_decoder.pop_frame();
        std::string_view payload = frame;
        if (m_sealer) {
            auto opened = m_sealer->open(frame);
            if (!opened) {
                close("bad frame: " + opened.error().message);
                return false;
            }
            payload = opened.value();
        }
        auto parsed = core::parse_message(payload);
        if (!parsed) {
            // The parser quotes what the peer sent (a message type, a version): escaped and cut,
            // since the reason is logged and kept in the report.
            if (!authenticated && core::foreign_protocol_version(payload)) {
                // An agent of another preflight version: the operator must hear it, and the
                // agent is told why (in our version's framing, which it may not read).
                m_handler.on_incompatible(self, parsed.error().message);
                return false;
            }
            close("bad message: " +
                  core::escape_for_log(parsed.error().message, core::k_log_reason_bytes));
            return false;
        }
        m_handler.on_message(self, std::move(parsed.value()));
    }
    // The hello may have authenticated the peer: its partial bytes move to the other share.
    return m_open && account_partial_frame();
}

bool Connection::account_partial_frame() {
    const std::size_t held = m_decoder.buffered();
    if (held == 0) {
        m_partial_since.reset();
    } else if (!m_partial_since || m_partial_frame != m_decoder.frames_decoded()) {
        m_partial_since = m_last_received;  // a new frame began in this read
        m_partial_frame = m_decoder.frames_decoded();
    }
    if (m_budget != nullptr && !m_budget->update(m_budget_share, held, authenticated)) {
        close("partial frames over the controller's limit of " + std::to_string(m_budget->cap()) +
              " bytes across all connections" +
              (authenticated ? "" : " (half of it for unauthenticated peers)"));
        return false;
    }
    return true;
}

void Connection::read_more() {
    auto self = shared_from_this();
    m_stream.socket().async_wait(asio::ip::tcp::socket::wait_read,
                                 [this, self](boost::system::error_code ec) {
                                     if (!m_open) {
                                         return;
                                     }
                                     if (ec) {
                                         close("read failed: " + ec.message());
                                         return;
                                     }
                                     on_readable();
                                 });
}

void Connection::on_readable() {
    auto self = shared_from_this();
    auto& buffer = shared_read_buffer();
    // Drain what the kernel holds, up to a bound so one busy peer cannot starve the others.
    for (int reads = 0; reads < 16 && m_open; ++reads) {
        boost::system::error_code ec;
        std::size_t n = m_stream.socket().read_some(asio::buffer(buffer), ec);
        if (ec == asio::error::would_block || ec == asio::error::try_again) {
            break;
        }
        if (ec) {
            close(ec == asio::error::eof ? "connection closed by peer"
                                         : "read failed: " + ec.message());
            return;
        }
        if (!consume(self, std::string_view(buffer.data(), n))) {
            return;
        }
        if (n < buffer.size()) {
            break;  // the kernel had no more
        }
    }
    if (m_open) {
        read_more();
    }
}

void Connection::send(const core::Message& message) {
    if (m_open) {
        send_payload(core::serialize(message));
    }
}

void Connection::send_payload(std::string_view payload) {
    if (!m_open) {
        return;
    }
    auto frame = core::encode_frame(m_sealer ? m_sealer->seal(payload) : std::string(payload));
    if (!frame) {
        spdlog::error("dropping a frame to {}: {}", m_peer, frame.error().message);
        return;
    }
    send_frame(std::make_shared<const std::string>(std::move(frame.value())));
}

void Connection::seal_from_now(core::FrameSealer sealer) {
    m_sealer = std::make_unique<core::FrameSealer>(std::move(sealer));
}

void Connection::send_frame(std::shared_ptr<const std::string> frame) {
    if (!m_open) {
        return;
    }
    m_last_sent = std::chrono::steady_clock::now();
    m_queued_bytes += frame->size();
    if (m_queued_bytes > k_max_queued_bytes) {
        close("write queue over " + std::to_string(k_max_queued_bytes) +
              " bytes (peer not reading)");
        return;
    }
    m_write_queue.push_back(std::move(frame));
    if (!m_writing) {
        write_next();
    }
}

void Connection::send_and_close(const core::Message& message, const std::string& reason) {
    send(message);
    if (m_open) {
        m_close_after_write = reason;
        if (!m_writing) {
            close(reason);
        }
    }
}

void Connection::write_next() {
    if (m_write_queue.empty() || !m_open) {
        m_writing = false;
        if (m_open && !m_close_after_write.empty()) {
            close(m_close_after_write);
        }
        return;
    }
    m_writing = true;
    auto self = shared_from_this();
    asio::async_write(m_stream, asio::buffer(*m_write_queue.front()),
                      [this, self](boost::system::error_code ec, std::size_t) {
                          if (!m_open) {
                              return;
                          }
                          if (ec) {
                              close("write failed: " + ec.message());
                              return;
                          }
                          m_queued_bytes -= m_write_queue.front()->size();
                          m_write_queue.pop_front();
                          write_next();
                      });
}

void Connection::close(const std::string& reason) {
    if (!m_open) {
        return;
    }
    m_open = false;
    m_stream.close();
    m_write_queue.clear();
    if (m_budget != nullptr) {
        m_budget->release(m_budget_share);
    }
    m_handler.on_closed(shared_from_this(), reason);
}

}  // namespace preflight::controller
