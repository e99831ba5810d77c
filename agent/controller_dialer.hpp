// Reaching the controller: resolve, connect and (with --tls-ca) the TLS handshake that checks the
// controller's certificate, retried with exponential backoff and jitter until the connect timeout.
// A certificate that fails is final (retrying cannot fix it).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio.hpp>

#include "agent/agent_options.hpp"
#include "core/stream.hpp"
#include "core/tls.hpp"

namespace preflight::agent {

class ControllerDialer {
  public:
    using Connected = std::function<void(std::unique_ptr<core::Stream>)>;
    using Failed = std::function<void(int exit_code)>;

    ControllerDialer(boost::asio::io_context& io, const AgentOptions& options,
                     std::shared_ptr<core::TlsContext> tls)
        : m_io(io), m_options(options), m_tls(std::move(tls)), m_timer(io) {}

    // Dials until connected (on_connected gets the stream), or gives up: on_failed with
    // k_agent_failed past the deadline, k_agent_rejected for a refused certificate.
    void start(std::chrono::steady_clock::time_point deadline, Connected on_connected,
               Failed on_failed);
    void cancel();

  private:
    void dial();
    void start_tls();
    void retry(const std::string& why);

    boost::asio::io_context& m_io;
    const AgentOptions& m_options;
    std::shared_ptr<core::TlsContext> m_tls;  // null: plain TCP
    boost::asio::steady_timer m_timer;
    std::unique_ptr<core::Stream> m_stream;  // a fresh one per attempt
    std::string m_verify_error;              // why the controller's certificate was refused
    std::chrono::steady_clock::time_point m_deadline;
    Connected m_on_connected;
    Failed m_on_failed;
    long m_backoff_ms = 200;
    bool m_cancelled = false;
};

}  // namespace preflight::agent
