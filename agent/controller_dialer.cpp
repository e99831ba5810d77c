#include "agent/controller_dialer.hpp"

#include <random>

#include <spdlog/spdlog.h>

#include "agent/controller_tls.hpp"

namespace preflight::agent {

namespace asio = boost::asio;

void ControllerDialer::start(std::chrono::steady_clock::time_point deadline, Connected on_connected,
                             Failed on_failed) {
    m_deadline = deadline;
    m_on_connected = std::move(on_connected);
    m_on_failed = std::move(on_failed);
    dial();
}

void ControllerDialer::cancel() {
    m_cancelled = true;
    m_timer.cancel();
    if (m_stream) {
        m_stream->close();
    }
}

void ControllerDialer::dial() {
    asio::ip::tcp::resolver resolver(m_io);
    boost::system::error_code ec;
    auto endpoints =
        resolver.resolve(m_options.controller_host, std::to_string(m_options.controller_port), ec);
    if (ec) {
        retry("resolve " + m_options.controller_host + ": " + ec.message());
        return;
    }
    m_stream = m_tls ? std::make_unique<core::Stream>(asio::ip::tcp::socket(m_io), *m_tls)
                     : std::make_unique<core::Stream>(asio::ip::tcp::socket(m_io));
    asio::async_connect(m_stream->socket(), endpoints,
                        [this](boost::system::error_code cec, const asio::ip::tcp::endpoint&) {
                            if (m_cancelled) {
                                return;
                            }
                            if (cec) {
                                retry(cec.message());
                            } else if (m_tls) {
                                start_tls();
                            } else {
                                m_on_connected(std::move(m_stream));
                            }
                        });
}

// Verifies the controller's chain against --tls-ca and its name (--tls-server-name, else the host
// dialed).
void ControllerDialer::start_tls() {
    auto* tls = m_stream->tls();
    const std::string name =
        m_options.tls_server_name.empty() ? m_options.controller_host : m_options.tls_server_name;
    m_verify_error.clear();
    verify_controller_as(*tls, name, &m_verify_error);
    tls->async_handshake(asio::ssl::stream_base::client, [this](boost::system::error_code ec) {
        if (m_cancelled) {
            return;
        }
        if (ec && !m_verify_error.empty()) {
            core::take_openssl_error();
            spdlog::error("refusing controller {}:{}: TLS certificate check failed: {} (CA {})",
                          m_options.controller_host, m_options.controller_port, m_verify_error,
                          m_options.tls_ca);
            m_on_failed(k_agent_rejected);
            return;
        }
        if (ec) {
            std::string why = core::take_openssl_error();
            retry("TLS handshake: " + (why.empty() ? ec.message() : why));
            return;
        }
        m_on_connected(std::move(m_stream));
    });
}

void ControllerDialer::retry(const std::string& why) {
    if (std::chrono::steady_clock::now() >= m_deadline) {
        spdlog::error("cannot reach controller {}:{} within {:.0f} s: {}",
                      m_options.controller_host, m_options.controller_port,
                      m_options.connect_timeout_s, why);
        m_on_failed(k_agent_failed);
        return;
    }
    // Exponential backoff with jitter so a thousand agents do not dial in lockstep.
    static thread_local std::mt19937 rng{std::random_device{}()};
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    auto delay = std::chrono::milliseconds(
        static_cast<long>(static_cast<double>(m_backoff_ms) * jitter(rng)));
    m_backoff_ms = std::min(m_backoff_ms * 2, 5000L);
    spdlog::debug("dial failed ({}); retrying in {} ms", why, delay.count());
    if (m_stream) {
        m_stream->close();
    }
    m_timer.expires_after(delay);
    m_timer.async_wait([this](boost::system::error_code ec) {
        if (!ec && !m_cancelled) {
            dial();
        }
    });
}

}  // namespace preflight::agent
