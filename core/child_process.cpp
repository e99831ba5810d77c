// ChildProcess: a long-running child in its own process group (process.hpp).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/process.hpp"
#include "core/process_spawn.hpp"

namespace preflight::core {

using spawn::fork_exec;
using spawn::kill_group;
using Clock = std::chrono::steady_clock;

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : m_pid(other.m_pid), m_status(other.m_status) {
    other.m_pid = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        terminate(std::chrono::milliseconds(0));
        m_pid = other.m_pid;
        m_status = other.m_status;
        other.m_pid = -1;
    }
    return *this;
}

ChildProcess::~ChildProcess() {
    terminate(std::chrono::milliseconds(500));
}

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv,
                                         const std::map<std::string, std::string>& env,
                                         const std::string& output_path,
                                         const std::string& stdin_data) {
    if (stdin_data.size() > PIPE_BUF) {
        return Error{"stdin data for '" + (argv.empty() ? std::string() : argv[0]) +
                     "' is longer than PIPE_BUF"};
    }
    UniqueFd in_read;
    UniqueFd in_write;
    if (!stdin_data.empty()) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            return Error{std::string("pipe: ") + std::strerror(errno)};
        }
        in_read = UniqueFd(fds[0]);
        in_write = UniqueFd(fds[1]);
    }
    UniqueFd out;
    if (!output_path.empty()) {
        // A fresh file each time (the log of this run), never one planted at the name.
        auto opened = open_log_file(output_path, LogOpen::fresh);
        if (!opened) {
            return opened.error();
        }
        out = std::move(opened.value());
    }
    auto pid = fork_exec(argv, env, out.get(), in_read.get());
    out.reset();
    if (!pid) {
        return pid.error();
    }
    if (in_write.get() >= 0) {
        // Written whole into the empty pipe (<= PIPE_BUF: atomic, never blocks) while we still
        // hold its read end, so no SIGPIPE; closing it is the child's end of input.
        ssize_t n = 0;
        do {
            n = ::write(in_write.get(), stdin_data.data(), stdin_data.size());
        } while (n < 0 && errno == EINTR);
        if (n != static_cast<ssize_t>(stdin_data.size())) {
            const int err = errno;
            kill_group(*pid, SIGKILL);
            int status = 0;
            ::waitpid(*pid, &status, 0);
            return Error{std::string("writing the stdin of '") + argv[0] +
                         "': " + std::strerror(err)};
        }
    }
    ChildProcess child;
    child.m_pid = *pid;
    return child;
}

bool ChildProcess::running() {
    if (m_pid <= 0 || m_status) {
        return false;
    }
    int status = 0;
    pid_t w = ::waitpid(m_pid, &status, WNOHANG);
    if (w == m_pid) {
        m_status = status;
        return false;
    }
    return w == 0;
}

std::optional<int> ChildProcess::exit_status() const {
    return m_status;
}

bool ChildProcess::wait_for(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (running()) {
        if (Clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

void ChildProcess::terminate(std::chrono::milliseconds grace) {
    if (m_pid <= 0) {
        return;
    }
    if (running()) {
        kill_group(m_pid, SIGTERM);
        if (!wait_for(grace)) {
            kill_group(m_pid, SIGKILL);
            wait_for(std::chrono::milliseconds(2000));
        }
    }
    // The group may outlive its leader (a child that ignored SIGTERM); make sure it is gone.
    kill_group(m_pid, SIGKILL);
    m_pid = -1;
}

std::string sibling_executable(const std::string& name) {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? name : (self.parent_path() / name).string();
}

}  // namespace preflight::core
