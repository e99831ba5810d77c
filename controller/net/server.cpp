#include "controller/net/server.hpp"

#include <cerrno>

#include <spdlog/spdlog.h>

#include "core/fd_limit.hpp"

namespace preflight::controller {

namespace asio = boost::asio;

Server::Server(HubOptions options, std::shared_ptr<core::TlsContext> tls)
    : m_tls(std::move(tls)),
      m_acceptor(m_io),
      m_accept_retry(m_io),
      m_hub_expected(options.expected.size()),
      m_hub(m_io, std::move(options)) {}

Server::~Server() {
    stop();
}

core::Status Server::start(const std::string& listen_address, int port) {
    // One socket per agent: with the usual soft limit of 1024 a large run would fail in accept().
    auto fd_limit = core::raise_fd_limit();
    std::size_t wanted = m_hub_expected + 64;
    if (!fd_limit) {
        spdlog::warn("open-file limit: {}", fd_limit.error().message);
    } else if (*fd_limit < wanted) {
        spdlog::warn(
            "open-file limit {} is under the {} this run needs ({} agents + 64); agents beyond it "
            "cannot connect (raise the hard limit: ulimit -Hn)",
            *fd_limit, wanted, m_hub_expected);
    }
    boost::system::error_code ec;
    auto address = asio::ip::make_address(listen_address, ec);
    if (ec) {
        return core::Error{"invalid listen address '" + listen_address + "': " + ec.message()};
    }
    asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    m_acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
        m_acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    }
    if (!ec) {
        m_acceptor.bind(endpoint, ec);
    }
    if (!ec) {
        m_acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return core::Error{"cannot listen on " + listen_address + ":" + std::to_string(port) +
                           ": " + ec.message()};
    }
    m_port = m_acceptor.local_endpoint().port();
    accept_next();
    m_hub.start_timers();
    m_running = true;
    m_thread = std::thread([this] {
        try {
            m_io.run();
        } catch (const std::exception& e) {
            // A handler that throws is a bug; log it rather than terminate the whole run.
            spdlog::critical("controller I/O thread stopped: {}", e.what());
        }
    });
    spdlog::info("controller listening on {}:{}{}", listen_address, m_port, m_tls ? " (TLS)" : "");
    return {};
}

void Server::accept_next() {
    m_acceptor.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
        if (ec == asio::error::operation_aborted) {
            return;
        }
        if (!ec) {
            m_hub.accept(m_tls ? core::Stream(std::move(socket), *m_tls)
                               : core::Stream(std::move(socket)));
            accept_next();
            return;
        }
        // Out of file descriptors (a flood of silent connections, or a low limit): free one held
        // by an unauthenticated peer and retry at once; otherwise back off briefly instead of
        // spinning on an error that will not clear by itself.
        const bool out_of_fds = ec == asio::error::no_descriptors || ec.value() == ENFILE ||
                                ec == asio::error::no_buffer_space;
        if (out_of_fds && m_hub.shed_unauthenticated("out of file descriptors")) {
            accept_next();
            return;
        }
        if (m_accept_errors++ % 100 == 0) {
            spdlog::warn("accept failed: {} (retrying every 50 ms)", ec.message());
        }
        m_accept_retry.expires_after(std::chrono::milliseconds(50));
        m_accept_retry.async_wait([this](boost::system::error_code wait_ec) {
            if (!wait_ec && m_acceptor.is_open()) {
                accept_next();
            }
        });
    });
}

void Server::stop() {
    if (!m_running) {
        return;
    }
    m_running = false;
    m_hub.shutdown("run finished");
    asio::post(m_io, [this] {
        boost::system::error_code ignored;
        m_acceptor.close(ignored);
        m_accept_retry.cancel();
    });
    // Give queued shutdown frames a moment to flush, then stop the loop.
    auto guard_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (!m_hub.connected_nodes().empty() && std::chrono::steady_clock::now() < guard_deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m_io.stop();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

core::Result<std::string> routed_source_address(const std::string& peer) {
    boost::system::error_code ec;
    auto address = asio::ip::make_address(peer, ec);
    if (ec) {
        return core::Error{"invalid address '" + peer + "'"};
    }
    asio::io_context io;
    asio::ip::udp::socket socket(io);
    socket.open(address.is_v4() ? asio::ip::udp::v4() : asio::ip::udp::v6(), ec);
    if (!ec) {
        socket.connect(asio::ip::udp::endpoint(address, 9), ec);
    }
    if (ec) {
        return core::Error{"no route to " + peer + ": " + ec.message()};
    }
    auto local = socket.local_endpoint(ec);
    if (ec) {
        return core::Error{"no local address toward " + peer + ": " + ec.message()};
    }
    return local.address().to_string();
}

}  // namespace preflight::controller
