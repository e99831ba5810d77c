#include "agent/stop_signal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <spdlog/spdlog.h>

#include "core/process.hpp"

namespace preflight::agent {
namespace {

// Written by the handler, so lock-free atomics and plain ints only.
std::atomic<int> g_signal{0};
std::atomic<int> g_write_fd{-1};
int g_read_fd = -1;
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
    const int saved = errno;
    int expected = 0;
    g_signal.compare_exchange_strong(expected, sig);
    const int fd = g_write_fd.load();
    if (fd >= 0) {
        const char byte = 1;
        ssize_t ignored = ::write(fd, &byte, 1);  // a full pipe already says "signalled"
        (void)ignored;
    }
    errno = saved;
}

}  // namespace

core::Status install_stop_signals() {
    static std::once_flag once;
    static core::Status status;
    std::call_once(once, [] {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
            status = core::Error{std::string("pipe: ") + std::strerror(errno)};
            return;
        }
        g_read_fd = fds[0];
        g_write_fd = fds[1];
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
            if (::sigaction(sig, &sa, nullptr) != 0) {
                status = core::Error{std::string("sigaction: ") + std::strerror(errno)};
                return;
            }
        }
    });
    return status;
}

int stop_signal() {
    return g_signal.load();
}

int stop_signal_fd() {
    return g_read_fd;
}

std::string interrupted_detail(int sig) {
    const char* name = sig == SIGTERM  ? "SIGTERM"
                       : sig == SIGINT ? "SIGINT"
                       : sig == SIGHUP ? "SIGHUP"
                                       : nullptr;
    return std::string("agent interrupted by ") +
           (name != nullptr ? name : "signal " + std::to_string(sig));
}

void StopWatch::watch(Hooks hooks) {
    const int fd = stop_signal_fd();
    if (fd < 0) {
        return;
    }
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
        spdlog::warn("cannot watch for stop signals: {}", std::strerror(errno));
        return;
    }
    m_hooks = std::move(hooks);
    m_signal.assign(own);
    m_signal.async_wait(boost::asio::posix::descriptor_base::wait_read,
                        [this](boost::system::error_code ec) {
                            if (ec || m_stopping) {
                                return;
                            }
                            m_stopping = true;
                            const int sig = stop_signal();
                            spdlog::warn("{}: stopping", interrupted_detail(sig));
                            // Nothing new may start once the programs are being stopped.
                            core::refuse_new_children();
                            m_hooks.begin(sig);
                            core::kill_running_children(SIGTERM);
                            m_deadline = std::chrono::steady_clock::now() + k_stop_grace;
                            tick();
                        });
}

void StopWatch::cancel() {
    boost::system::error_code ignored;
    m_signal.close(ignored);
    m_timer.cancel();
}

void StopWatch::tick() {
    const bool programs_gone = core::kill_running_children(0) == 0;
    if ((programs_gone && m_hooks.reported()) || std::chrono::steady_clock::now() >= m_deadline) {
        if (!programs_gone) {
            spdlog::warn("{} program group(s) still running {} s after SIGTERM: SIGKILL",
                         core::kill_running_children(SIGKILL), k_stop_grace.count());
        }
        m_hooks.end();
        return;
    }
    m_timer.expires_after(std::chrono::milliseconds(20));
    m_timer.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            tick();
        }
    });
}

}  // namespace preflight::agent
