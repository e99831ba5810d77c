// The controller's network side: an io_context on one I/O thread, a TCP acceptor, and the AgentHub
// that owns the connections. Started and stopped by the orchestrator.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include <boost/asio.hpp>

#include "controller/net/agent_hub.hpp"
#include "core/result.hpp"
#include "core/tls.hpp"

namespace preflight::controller {

class Server {
  public:
    // tls: when set, every connection must complete a TLS handshake with it before the challenge.
    explicit Server(HubOptions options, std::shared_ptr<core::TlsContext> tls = nullptr);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds listen_address:port (0: ephemeral) and starts the I/O thread.
    core::Status start(const std::string& listen_address, int port);
    int port() const { return m_port; }
    AgentHub& hub() { return m_hub; }
    void stop();  // shuts agents down, stops the I/O thread; idempotent

  private:
    void accept_next();

    std::shared_ptr<core::TlsContext> m_tls;
    boost::asio::io_context m_io;
    boost::asio::ip::tcp::acceptor m_acceptor;
    boost::asio::steady_timer m_accept_retry;  // back-off after a failed accept
    std::uint64_t m_accept_errors = 0;
    std::size_t m_hub_expected = 0;  // agents the run expects (for the open-file limit)
    AgentHub m_hub;
    std::thread m_thread;
    int m_port = 0;
    bool m_running = false;
};

// The local address the kernel would use to reach `peer` (UDP connect, no packet sent): what an
// agent at `peer` should dial to reach a controller listening on all addresses. Error when
// unroutable.
core::Result<std::string> routed_source_address(const std::string& peer);

}  // namespace preflight::controller
