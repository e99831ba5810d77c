#include "controller/connection.hpp"

#include <spdlog/spdlog.h>

namespace preflight::controller {

namespace asio = boost::asio;

Connection::Connection(asio::ip::tcp::socket socket, ConnectionHandler& handler)
    : m_socket(std::move(socket)),
      m_handler(handler),
      m_last_received(std::chrono::steady_clock::now()) {
    boost::system::error_code ec;
    auto remote = m_socket.remote_endpoint(ec);
    m_peer =
        ec ? std::string("?") : remote.address().to_string() + ":" + std::to_string(remote.port());
    m_socket.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start() {
    read_more();
}

void Connection::read_more() {
    auto self = shared_from_this();
    m_socket.async_read_some(
        asio::buffer(m_read_buffer), [this, self](boost::system::error_code ec, std::size_t n) {
            if (!m_open) {
                return;
            }
            if (ec) {
                close(ec == asio::error::eof ? "connection closed by peer"
                                             : "read failed: " + ec.message());
                return;
            }
            m_last_received = std::chrono::steady_clock::now();
            if (auto st = m_decoder.feed(std::string_view(m_read_buffer.data(), n)); !st) {
                close("bad frame: " + st.error().message);
                return;
            }
            while (m_open && m_decoder.has_frame()) {
                auto parsed = core::parse_message(m_decoder.pop_frame());
                if (!parsed) {
                    close("bad message: " + parsed.error().message);
                    return;
                }
                m_handler.on_message(self, std::move(parsed.value()));
            }
            if (m_open) {
                read_more();
            }
        });
}

void Connection::send(const core::Message& message) {
    if (!m_open) {
        return;
    }
    auto frame = core::encode_frame(core::serialize(message));
    if (!frame) {
        spdlog::error("dropping {} to {}: {}", core::message_type(message), m_peer,
                      frame.error().message);
        return;
    }
    m_queued_bytes += frame->size();
    if (m_queued_bytes > k_max_queued_bytes) {
        close("write queue over " + std::to_string(k_max_queued_bytes) +
              " bytes (peer not reading)");
        return;
    }
    m_write_queue.push_back(std::move(frame.value()));
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
    asio::async_write(m_socket, asio::buffer(m_write_queue.front()),
                      [this, self](boost::system::error_code ec, std::size_t) {
                          if (!m_open) {
                              return;
                          }
                          if (ec) {
                              close("write failed: " + ec.message());
                              return;
                          }
                          m_queued_bytes -= m_write_queue.front().size();
                          m_write_queue.pop_front();
                          write_next();
                      });
}

void Connection::close(const std::string& reason) {
    if (!m_open) {
        return;
    }
    m_open = false;
    boost::system::error_code ignored;
    m_socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    m_socket.close(ignored);
    m_write_queue.clear();
    m_handler.on_closed(shared_from_this(), reason);
}

}  // namespace preflight::controller
