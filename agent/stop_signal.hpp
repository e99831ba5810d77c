// SIGTERM, SIGINT and SIGHUP for preflight-agent. A killed agent must not leave its check's
// programs running (they hold GPUs and ports), so the handler only records the signal and writes a
// byte to a self-pipe (both async-signal-safe); the session's I/O loop and the standalone wait
// notice it, kill the programs' process groups and report the running check as `error`.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include <boost/asio.hpp>

#include "core/result.hpp"

namespace preflight::agent {

// preflight-agent's own exit codes, after core::k_exit_code_help in its --help.
inline constexpr std::string_view k_agent_exit_code_help =
    "\npreflight-agent: 4 also when it lost or never reached its controller, or was stopped by\n"
    "SIGTERM, SIGINT or SIGHUP: the running check's programs are killed (SIGTERM, SIGKILL 2 s\n"
    "later), the check is reported as error and nothing is drained.";

// How long the programs of an interrupted check get between SIGTERM and SIGKILL.
inline constexpr auto k_stop_grace = std::chrono::seconds(2);

// Installs the handlers, once per process. Only the real program calls it: sessions run inside a
// test process leave that process's signals alone.
core::Status install_stop_signals();

// The first stop signal received; 0 while none has been.
int stop_signal();

// The read end of the self-pipe: readable from the first signal on (never drained, so every
// waiter sees it); -1 before install_stop_signals. Owned here: dup it to hand it to Asio.
int stop_signal_fd();

// "agent interrupted by SIGTERM": the detail of the check that was running.
std::string interrupted_detail(int sig);

// An agent session's stop, on its I/O loop: when a stop signal arrives, begin(sig) (report the
// running step), SIGTERM to every process group a check started (core::kill_running_children),
// then end() once they are gone and reported() says the report went out, or at k_stop_grace after
// SIGKILL to what is left.
class StopWatch {
  public:
    struct Hooks {
        std::function<void(int sig)> begin;
        std::function<bool()> reported;
        std::function<void()> end;
    };
    explicit StopWatch(boost::asio::io_context& io) : m_signal(io), m_timer(io) {}
    // Starts watching; a no-op when the program did not install the handlers.
    void watch(Hooks hooks);
    // Stops watching (the session ends for another reason).
    void cancel();

  private:
    void tick();

    boost::asio::posix::stream_descriptor m_signal;  // a dup of the self-pipe's read end
    boost::asio::steady_timer m_timer;
    Hooks m_hooks;
    std::chrono::steady_clock::time_point m_deadline;
    bool m_stopping = false;
};

}  // namespace preflight::agent
