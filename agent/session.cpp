#include "agent/session.hpp"

#include <atomic>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "agent/controller_dialer.hpp"
#include "agent/controller_frames.hpp"
#include "agent/controller_kv_store.hpp"
#include "agent/step_runner.hpp"
#include "agent/stop_signal.hpp"
#include "core/agent_handshake.hpp"
#include "core/auth.hpp"
#include "core/build_info.hpp"
#include "core/checked_number.hpp"
#include "core/heartbeat.hpp"
#include "core/log_text.hpp"
#include "core/protocol.hpp"
#include "core/stream.hpp"
#include "core/tls.hpp"

namespace preflight::agent {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

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
        m_dialer.start(
            m_dial_deadline,
            [this](std::unique_ptr<core::Stream> stream) {
                m_stream = std::move(stream);
                connected();
            },
            [this](int code) { finish(code); });
    }

    // The connection ended before the welcome: a controller shedding unauthenticated connections
    // (a flood from this node's address) or restarting. Dial again until the connect deadline; the
    // handshake starts over. Callbacks of the old connection see another generation and return.
    void redial(const std::string& why) {
        spdlog::warn("controller connection ended before the welcome ({}); dialing again",
                     core::escape_for_log(why, core::k_log_reason_bytes));
        ++m_generation;
        if (m_stream) {
            m_stream->close();
        }
        m_write_queue.clear();
        m_frames = ControllerFrames{};
        m_handshake = core::AgentHandshake{m_options.node, m_options.node_key};
        m_challenged = false;
        dial();
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

    void read_more() {
        m_stream->async_read_some(
            asio::buffer(m_buffer),
            [this, generation = m_generation](boost::system::error_code ec, std::size_t n) {
                if (m_finished || generation != m_generation) {
                    return;
                }
                if (ec) {
                    std::string why = core::is_stream_end(ec) ? "controller closed the connection"
                                                              : "read failed: " + ec.message();
                    if (!m_tls && !m_challenged) {
                        why += " before its challenge (a controller with TLS on needs --tls-ca)";
                    }
                    ended(why);
                    return;
                }
                m_last_received = Clock::now();
                if (auto st = m_frames.feed(std::string_view(m_buffer.data(), n)); !st) {
                    lost("bad frame from controller: " + st.error().message);
                    return;
                }
                while (!m_finished) {
                    auto message = m_frames.next();
                    if (!message) {
                        break;
                    }
                    if (!*message) {
                        lost("bad frame from controller: " + message->error().message);
                        return;
                    }
                    handle(std::move(message->value()));
                }
                if (!m_finished) {
                    read_more();
                }
            });
    }

    void handle(core::Message message) {
        if (auto* challenge = std::get_if<core::msg::Challenge>(&message)) {
            m_challenged = true;
            auto hello = m_handshake.answer(*challenge);
            if (!hello) {
                refuse_controller(hello.error().message);
                return;
            }
            hello->version = std::string(core::build_version());
            hello->capabilities = step_capabilities();
            hello->inventory = {{"sysfs_root", m_options.sysfs_root}, {"pid", ::getpid()}};
            send(hello.value());
        } else if (auto* welcome = std::get_if<core::msg::Welcome>(&message)) {
            auto sealer = m_handshake.accept(*welcome);
            if (!sealer) {
                // Whoever answered does not hold this node's key: never run anything it asks.
                refuse_controller(sealer.error().message);
                return;
            }
            m_authenticated = true;
            m_frames.seal_from_now(std::move(sealer.value()));
            m_heartbeat = std::chrono::milliseconds(
                static_cast<long>(std::max(0.1, welcome->heartbeat_s) * 1000));
            spdlog::info("authenticated for run {}", welcome->run_id);
            heartbeat_tick();
        } else if (auto* reject = std::get_if<core::msg::Reject>(&message)) {
            spdlog::error("controller rejected this agent: {}",
                          core::escape_for_log(reject->reason, core::k_log_reason_bytes));
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
            auto result =
                run_step(run,
                         StepEnvironment{m_options.node, m_options.sysfs_root, m_local_address,
                                         &m_kv, &m_cancel, &m_options.exec_policy},
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
        if (core::heartbeat_due(m_last_sent, Clock::now(), m_heartbeat)) {
            send(core::msg::Heartbeat{});
        }
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
        auto frame = m_frames.encode(message);
        if (!frame) {
            spdlog::error("cannot send {}: {}", core::message_type(message), frame.error().message);
            return;
        }
        m_last_sent = Clock::now();
        m_write_queue.push_back(std::move(frame.value()));
        if (m_write_queue.size() == 1) {
            write_next();
        }
    }

    void write_next() {
        asio::async_write(
            *m_stream, asio::buffer(m_write_queue.front()),
            [this, generation = m_generation](boost::system::error_code ec, std::size_t) {
                if (m_finished || generation != m_generation) {
                    return;
                }
                if (ec) {
                    ended("write failed: " + ec.message());
                    return;
                }
                m_write_queue.pop_front();
                if (!m_write_queue.empty()) {
                    write_next();
                }
            });
    }

    void refuse_controller(const std::string& why) {
        spdlog::error("refusing controller {}:{}: {}", m_options.controller_host,
                      m_options.controller_port, why);
        finish(k_agent_rejected);
    }

    // The connection ended (read or write failed): before the welcome, dial again while the
    // connect deadline allows; after it, the controller is lost. A controller that breaks the
    // protocol is not dialed again (lost, refuse_controller).
    void ended(const std::string& why) {
        if (!m_authenticated && !m_finished && Clock::now() < m_dial_deadline) {
            redial(why);
            return;
        }
        lost(why);
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
        m_dialer.cancel();
        if (m_stream) {
            m_stream->close();
        }
        m_io.stop();
    }

    AgentOptions m_options;
    std::shared_ptr<core::TlsContext> m_tls;  // null: plain TCP
    asio::io_context m_io;
    ControllerDialer m_dialer{m_io, m_options, m_tls};
    std::unique_ptr<core::Stream> m_stream;  // once connected
    asio::steady_timer m_timer;
    asio::steady_timer m_watchdog;
    StopWatch m_stop;
    ControllerKvStore m_kv;
    ControllerFrames m_frames;  // sealed once the controller proved it holds this node's key
    core::AgentHandshake m_handshake{m_options.node, m_options.node_key};
    std::array<char, 64 * 1024> m_buffer{};
    std::deque<std::string> m_write_queue;
    std::string m_local_address;
    Clock::time_point m_dial_deadline;
    Clock::time_point m_last_received;
    Clock::time_point m_last_sent;  // when a frame was last queued for the controller
    std::chrono::milliseconds m_heartbeat{2000};
    std::thread m_worker;
    std::atomic<bool> m_cancel{false};
    bool m_worker_done = true;
    bool m_busy = false;
    bool m_wedged = false;
    std::uint64_t m_current_step = 0;
    std::string m_current_check;
    bool m_authenticated = false;
    unsigned m_generation = 0;  // of the connection; bumped by redial()
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
