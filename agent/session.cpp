#include "agent/session.hpp"

#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "agent/controller_kv_store.hpp"
#include "agent/controller_tls.hpp"
#include "agent/step_runner.hpp"
#include "agent/stop_signal.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/frame_codec.hpp"
#include "core/protocol.hpp"
#include "core/stream.hpp"
#include "core/tls.hpp"

namespace preflight::agent {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr const char* k_version = "0.1.0";
// A check that overruns its deadline by this much is reported as hung.
constexpr auto k_hang_grace = std::chrono::seconds(5);

class Session {
  public:
    Session(AgentOptions options, std::shared_ptr<core::TlsContext> tls)
        : m_options(std::move(options)),
          m_tls(std::move(tls)),
          m_timer(m_io),
          m_watchdog(m_io),
          m_stop(m_io),
          m_kv([this](core::Message m) { post_send(std::move(m)); }) {}

    int run() {
        m_dial_deadline = Clock::now() + core::clamp_to_millis(m_options.connect_timeout_s);
        // A stop signal: the step is an error now; its late result (programs killed) is not sent.
        m_stop.watch({[this](int sig) {
                          m_cancel = true;
                          if (m_busy && !m_wedged) {
                              send(core::msg::StepResult{m_current_step,
                                                         interrupted_result(m_current_check, sig)});
                          }
                          m_wedged = m_busy;
                      },
                      [this] { return m_write_queue.empty(); },
                      [this] { finish(k_agent_interrupted); }});
        dial();
        m_io.run();
        m_cancel = true;
        m_kv.fail_all("agent stopping");
        return join_or_leave(m_worker, m_worker_done, m_exit_code);
    }

  private:
    void dial() {
        asio::ip::tcp::resolver resolver(m_io);
        boost::system::error_code ec;
        auto endpoints = resolver.resolve(m_options.controller_host,
                                          std::to_string(m_options.controller_port), ec);
        if (ec) {
            retry_dial("resolve " + m_options.controller_host + ": " + ec.message());
            return;
        }
        m_stream = m_tls ? std::make_unique<core::Stream>(asio::ip::tcp::socket(m_io), *m_tls)
                         : std::make_unique<core::Stream>(asio::ip::tcp::socket(m_io));
        asio::async_connect(m_stream->socket(), endpoints,
                            [this](boost::system::error_code cec, const asio::ip::tcp::endpoint&) {
                                if (cec) {
                                    retry_dial(cec.message());
                                    return;
                                }
                                if (m_tls) {
                                    start_tls();
                                } else {
                                    connected();
                                }
                            });
    }

    // Verifies the controller's chain against --tls-ca and its name (--tls-server-name, else the
    // host dialed). A certificate that fails is final (exit 3): retrying cannot fix it.
    void start_tls() {
        auto* tls = m_stream->tls();
        const std::string name = m_options.tls_server_name.empty() ? m_options.controller_host
                                                                   : m_options.tls_server_name;
        m_verify_error.clear();
        verify_controller_as(*tls, name, &m_verify_error);
        tls->async_handshake(asio::ssl::stream_base::client, [this](boost::system::error_code ec) {
            if (m_finished) {
                return;
            }
            if (ec && !m_verify_error.empty()) {
                core::take_openssl_error();
                spdlog::error("refusing controller {}:{}: TLS certificate check failed: {} (CA {})",
                              m_options.controller_host, m_options.controller_port, m_verify_error,
                              m_options.tls_ca);
                finish(k_agent_rejected);
                return;
            }
            if (ec) {
                std::string why = core::take_openssl_error();
                retry_dial("TLS handshake: " + (why.empty() ? ec.message() : why));
                return;
            }
            connected();
        });
    }

    void connected() {
        boost::system::error_code ignored;
        m_stream->socket().set_option(asio::ip::tcp::no_delay(true), ignored);
        m_local_address = m_stream->socket().local_endpoint(ignored).address().to_string();
        spdlog::info("connected to controller {}:{} from {}{}", m_options.controller_host,
                     m_options.controller_port, m_local_address, m_tls ? " (TLS)" : "");
        m_last_received = Clock::now();
        read_more();
    }

    void retry_dial(const std::string& why) {
        if (Clock::now() >= m_dial_deadline) {
            spdlog::error("cannot reach controller {}:{} within {:.0f} s: {}",
                          m_options.controller_host, m_options.controller_port,
                          m_options.connect_timeout_s, why);
            finish(k_agent_failed);
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
            if (!ec) {
                dial();
            }
        });
    }

    void read_more() {
        m_stream->async_read_some(
            asio::buffer(m_buffer), [this](boost::system::error_code ec, std::size_t n) {
                if (m_finished) {
                    return;
                }
                if (ec) {
                    std::string why = core::is_stream_end(ec) ? "controller closed the connection"
                                                              : "read failed: " + ec.message();
                    if (!m_tls && !m_challenged) {
                        why += " before its challenge (a controller with TLS on needs --tls-ca)";
                    }
                    lost(why);
                    return;
                }
                m_last_received = Clock::now();
                if (auto st = m_decoder.feed(std::string_view(m_buffer.data(), n)); !st) {
                    lost("bad frame from controller: " + st.error().message);
                    return;
                }
                while (!m_finished && m_decoder.has_frame()) {
                    auto message = core::parse_message(m_decoder.pop_frame());
                    if (!message) {
                        lost("bad message from controller: " + message.error().message);
                        return;
                    }
                    handle(std::move(message.value()));
                }
                if (!m_finished) {
                    read_more();
                }
            });
    }

    void handle(core::Message message) {
        if (auto* challenge = std::get_if<core::msg::Challenge>(&message)) {
            m_challenged = true;
            core::msg::Hello hello;
            hello.node = m_options.node;
            hello.version = k_version;
            hello.capabilities = step_capabilities();
            hello.inventory = {{"sysfs_root", m_options.sysfs_root}, {"pid", ::getpid()}};
            hello.mac = core::auth_mac(m_options.token, challenge->nonce, m_options.node);
            send(hello);
        } else if (auto* welcome = std::get_if<core::msg::Welcome>(&message)) {
            m_authenticated = true;
            m_heartbeat = std::chrono::milliseconds(
                static_cast<long>(std::max(0.1, welcome->heartbeat_s) * 1000));
            spdlog::info("authenticated for run {}", welcome->run_id);
            heartbeat_tick();
        } else if (auto* reject = std::get_if<core::msg::Reject>(&message)) {
            spdlog::error("controller rejected this agent: {}", reject->reason);
            finish(k_agent_rejected);
        } else if (auto* run = std::get_if<core::msg::Run>(&message)) {
            start_step(std::move(*run));
        } else if (auto* value = std::get_if<core::msg::KvValue>(&message)) {
            m_kv.on_value(*value);
        } else if (auto* shutdown = std::get_if<core::msg::Shutdown>(&message)) {
            spdlog::info("controller asked to shut down: {}", shutdown->reason);
            finish(k_agent_ok);
        } else if (std::holds_alternative<core::msg::Heartbeat>(message)) {
            // last_received already updated
        } else {
            lost(std::string("unexpected '") + std::string(core::message_type(message)) +
                 "' from controller");
        }
    }

    void start_step(core::msg::Run run) {
        if (!m_authenticated) {
            lost("'run' before authentication");
            return;
        }
        if (m_busy) {
            send(core::msg::StepResult{run.step, busy_result(run.check, m_wedged)});
            return;
        }
        if (m_worker.joinable()) {
            m_worker.join();
        }
        m_busy = true;
        m_worker_done = false;
        m_current_step = run.step;
        m_current_check = run.check;
        auto deadline = Clock::now() + core::clamp_to_millis(run.deadline_s);
        spdlog::info("step {}: running {}{}", run.step, run.check,
                     run.group ? " in group " + run.group->id : std::string());
        m_watchdog.expires_at(deadline + k_hang_grace);
        m_watchdog.async_wait([this, step = run.step, check = run.check,
                               seconds = run.deadline_s](boost::system::error_code ec) {
            if (ec || !m_busy || m_current_step != step) {
                return;
            }
            m_wedged = true;
            auto hung = hung_result(check, seconds);
            spdlog::error("step {}: {}", step, hung.detail);
            send(core::msg::StepResult{step, hung});
        });
        m_worker = std::thread([this, run = std::move(run), deadline] {
            auto result = run_step(run,
                                   StepEnvironment{m_options.node, m_options.sysfs_root,
                                                   m_local_address, &m_kv, &m_cancel},
                                   deadline);
            asio::post(m_io, [this, step = run.step, result = std::move(result)] {
                m_worker_done = true;
                m_watchdog.cancel();
                if (m_wedged) {
                    // Already reported (hung, or interrupted); the late result is logged only.
                    spdlog::warn("step {} returned after it was reported: {}", step,
                                 core::to_string(result.verdict));
                    m_wedged = false;
                } else {
                    spdlog::info("step {}: {} {}", step, core::to_string(result.verdict),
                                 result.detail);
                    send(core::msg::StepResult{step, result});
                }
                m_busy = false;
            });
        });
    }

    void heartbeat_tick() {
        if (m_finished) {
            return;
        }
        auto silent = Clock::now() - m_last_received;
        if (silent > 3 * m_heartbeat) {
            lost("no heartbeat from controller for " +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(silent).count()) +
                 " s");
            return;
        }
        send(core::msg::Heartbeat{});
        m_timer.expires_after(m_heartbeat);
        m_timer.async_wait([this](boost::system::error_code ec) {
            if (!ec) {
                heartbeat_tick();
            }
        });
    }

    // Any thread.
    void post_send(core::Message message) {
        asio::post(m_io, [this, message = std::move(message)] { send(message); });
    }

    void send(const core::Message& message) {
        if (m_finished) {
            return;
        }
        auto frame = core::encode_frame(core::serialize(message));
        if (!frame) {
            spdlog::error("cannot send {}: {}", core::message_type(message), frame.error().message);
            return;
        }
        m_write_queue.push_back(std::move(frame.value()));
        if (m_write_queue.size() == 1) {
            write_next();
        }
    }

    void write_next() {
        asio::async_write(*m_stream, asio::buffer(m_write_queue.front()),
                          [this](boost::system::error_code ec, std::size_t) {
                              if (m_finished) {
                                  return;
                              }
                              if (ec) {
                                  lost("write failed: " + ec.message());
                                  return;
                              }
                              m_write_queue.pop_front();
                              if (!m_write_queue.empty()) {
                                  write_next();
                              }
                          });
    }

    void lost(const std::string& why) {
        spdlog::error("lost the controller: {}", why);
        finish(k_agent_failed);
    }

    void finish(int code) {
        if (m_finished) {
            return;
        }
        m_finished = true;
        m_exit_code = code;
        m_cancel = true;
        m_kv.fail_all("agent stopping");
        m_timer.cancel();
        m_watchdog.cancel();
        m_stop.cancel();
        if (m_stream) {
            m_stream->close();
        }
        m_io.stop();
    }

    AgentOptions m_options;
    std::shared_ptr<core::TlsContext> m_tls;  // null: plain TCP
    asio::io_context m_io;
    std::unique_ptr<core::Stream> m_stream;  // a fresh one per dial attempt
    std::string m_verify_error;              // why the controller's certificate was refused
    asio::steady_timer m_timer;
    asio::steady_timer m_watchdog;
    StopWatch m_stop;
    ControllerKvStore m_kv;
    core::FrameDecoder m_decoder;
    std::array<char, 64 * 1024> m_buffer{};
    std::deque<std::string> m_write_queue;
    std::string m_local_address;
    Clock::time_point m_dial_deadline;
    Clock::time_point m_last_received;
    std::chrono::milliseconds m_heartbeat{2000};
    long m_backoff_ms = 200;
    std::thread m_worker;
    std::atomic<bool> m_cancel{false};
    bool m_worker_done = true;
    bool m_busy = false;
    bool m_wedged = false;
    std::uint64_t m_current_step = 0;
    std::string m_current_check;
    bool m_authenticated = false;
    bool m_challenged = false;  // the controller's first frame arrived
    bool m_finished = false;
    int m_exit_code = k_agent_failed;
};

}  // namespace

int run_agent(const AgentOptions& options) {
    std::shared_ptr<core::TlsContext> tls;
    if (!options.tls_ca.empty()) {
        auto made = core::make_client_tls_context(options.tls_ca);
        if (!made) {
            spdlog::error("{}", made.error().message);
            return k_agent_usage;
        }
        tls = std::move(made.value());
    }
    Session session(options, std::move(tls));
    return session.run();
}

}  // namespace preflight::agent
