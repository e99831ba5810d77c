// A connected TCP byte stream, plain or inside TLS, for the agent <-> controller protocol. It
// models Asio's AsyncReadStream/AsyncWriteStream (callback handlers), so asio::async_write works on
// it unchanged; socket() is the TCP layer for options, readiness waits and close.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "core/tls.hpp"

namespace preflight::core {

class Stream {
  public:
    using Socket = boost::asio::ip::tcp::socket;
    using TlsStream = boost::asio::ssl::stream<Socket>;
    using executor_type = Socket::executor_type;

    explicit Stream(Socket socket) : m_plain(std::move(socket)) {}
    Stream(Socket socket, TlsContext& tls)
        : m_tls(std::make_unique<TlsStream>(std::move(socket), tls)) {}

    executor_type get_executor() { return socket().get_executor(); }
    Socket& socket() { return m_tls ? m_tls->next_layer() : *m_plain; }
    TlsStream* tls() { return m_tls.get(); }  // nullptr for a plain stream

    template <typename Buffers, typename Handler>
    void async_read_some(const Buffers& buffers, Handler&& handler) {
        if (m_tls) {
            m_tls->async_read_some(buffers, std::forward<Handler>(handler));
        } else {
            m_plain->async_read_some(buffers, std::forward<Handler>(handler));
        }
    }

    template <typename Buffers, typename Handler>
    void async_write_some(const Buffers& buffers, Handler&& handler) {
        if (m_tls) {
            m_tls->async_write_some(buffers, std::forward<Handler>(handler));
        } else {
            m_plain->async_write_some(buffers, std::forward<Handler>(handler));
        }
    }

    // Shuts the TCP connection down and closes it (no TLS close_notify: the protocol's own
    // shutdown message ends a session, so a truncated TLS stream loses nothing).
    void close() {
        boost::system::error_code ignored;
        socket().shutdown(Socket::shutdown_both, ignored);
        socket().close(ignored);
    }

  private:
    std::optional<Socket> m_plain;
    std::unique_ptr<TlsStream> m_tls;
};

// True for the ways a peer ends a stream: EOF, or a TLS peer closing without close_notify.
bool is_stream_end(const boost::system::error_code& ec);

}  // namespace preflight::core
