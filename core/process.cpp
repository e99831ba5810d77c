#include "core/process.hpp"

#include "core/atomic_file.hpp"
#include "core/process_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

extern char** environ;

namespace preflight::core {
namespace {

using Clock = std::chrono::steady_clock;

// The process groups of the children run_process is waiting for, so that a process that leaves
// with a call still running (std::_Exit past a budget) can stop them first. A child leaves the set
// in the same locked step that reaps it, so its pid can never be reused while it is listed.
std::mutex g_running_mutex;
bool g_refusing = false;  // guarded by g_running_mutex
std::set<pid_t>& running_groups() {
    static std::set<pid_t> groups;
    return groups;
}

// Builds the child's environment: ours with overrides applied.
std::vector<std::string> build_env(const std::map<std::string, std::string>& overrides) {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        if (eq != std::string::npos && overrides.count(entry.substr(0, eq)) != 0) {
            continue;
        }
        env.push_back(std::move(entry));
    }
    for (const auto& [key, value] : overrides) {
        env.push_back(key + "=" + value);
    }
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

// write() to a pipe without risking SIGPIPE for the whole process: the signal is blocked in this
// thread for the call, and a pending one raised by it is consumed.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
    sigset_t pipe_set;
    sigset_t old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    ssize_t n = ::write(fd, data, size);
    int saved = errno;
    if (n < 0 && saved == EPIPE) {
        timespec zero{0, 0};
        ::sigtimedwait(&pipe_set, nullptr, &zero);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
    errno = saved;
    return n;
}

}  // namespace

namespace spawn {

// Forks and execs argv in a new process group. stdout_fd/stdin_fd are dup'ed onto 1/2 and 0 when >=
// 0. Everything the child needs is prepared before fork, so the child only calls async-signal-safe
// functions. An exec failure is reported back through a close-on-exec pipe.
Result<pid_t> fork_exec(const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& env_overrides, int out_fd,
                        int in_fd) {
    if (argv.empty()) {
        return Error{"empty argv"};
    }
    std::vector<std::string> args = argv;
    std::vector<std::string> env = build_env(env_overrides);
    auto c_args = c_strings(args);
    auto c_env = c_strings(env);

    int error_pipe[2];
    if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
        return Error{std::string("pipe: ") + std::strerror(errno)};
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        int err = errno;
        ::close(error_pipe[0]);
        ::close(error_pipe[1]);
        return Error{std::string("fork: ") + std::strerror(err)};
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        // Undo signal dispositions a parent may have changed; a child must die on SIGINT/SIGTERM.
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::signal(SIGHUP, SIG_DFL);
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (in_fd >= 0) {
            ::dup2(in_fd, 0);
        } else {
            int devnull = ::open("/dev/null", O_RDONLY);
            if (devnull >= 0) {
                ::dup2(devnull, 0);
            }
        }
        if (out_fd >= 0) {
            ::dup2(out_fd, 1);
            ::dup2(out_fd, 2);
        }
        ::execvpe(c_args[0], c_args.data(), c_env.data());
        int err = errno;
        ssize_t ignored = ::write(error_pipe[1], &err, sizeof err);
        (void)ignored;
        ::_exit(127);
    }
    // Also set the group from the parent to close the race with an early kill.
    ::setpgid(pid, pid);
    ::close(error_pipe[1]);
    int child_errno = 0;
    ssize_t n;
    do {
        n = ::read(error_pipe[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    ::close(error_pipe[0]);
    if (n == sizeof child_errno) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        return Error{"cannot execute '" + argv[0] + "': " + std::strerror(child_errno)};
    }
    return pid;
}

void kill_group(pid_t pid, int sig) {
    if (pid > 0) {
        ::kill(-pid, sig);
    }
}

}  // namespace spawn

using spawn::fork_exec;
using spawn::kill_group;

std::string ProcessResult::describe() const {
    if (timed_out) {
        return "timed out (process group killed)";
    }
    if (signal != 0) {
        return "killed by signal " + std::to_string(signal);
    }
    return "exit " + std::to_string(exit_code);
}

Result<ProcessResult> SystemCommandRunner::run(const std::vector<std::string>& argv,
                                               const ProcessOptions& options) {
    return run_process(argv, options);
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
    {
        std::lock_guard<std::mutex> lock(g_running_mutex);
        if (g_refusing) {
            return Error{"not starting '" + (argv.empty() ? std::string() : argv[0]) +
                         "': this process is stopping"};
        }
    }
    int out_pipe[2] = {-1, -1};
    int out_fd = -1;
    if (!options.stdout_path.empty()) {
        auto opened = open_log_file(options.stdout_path, LogOpen::append);
        if (!opened) {
            return opened.error();
        }
        out_fd = opened->release();  // closed below like the pipe's end
    } else {
        if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
            return Error{std::string("pipe: ") + std::strerror(errno)};
        }
        out_fd = out_pipe[1];
    }
    int in_pipe[2] = {-1, -1};
    if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
        ::close(out_fd);
        if (out_pipe[0] >= 0) {
            ::close(out_pipe[0]);
        }
        return Error{std::string("pipe: ") + std::strerror(errno)};
    }

    auto spawned = fork_exec(argv, options.env, out_fd, in_pipe[0]);
    ::close(out_fd);
    ::close(in_pipe[0]);
    if (!spawned) {
        ::close(in_pipe[1]);
        if (out_pipe[0] >= 0) {
            ::close(out_pipe[0]);
        }
        return spawned.error();
    }
    pid_t pid = *spawned;
    {
        std::lock_guard<std::mutex> lock(g_running_mutex);
        running_groups().insert(pid);
        if (g_refusing) {  // the stop began while it was being forked
            kill_group(pid, SIGKILL);
        }
    }

    // stdin is fed from the wait loop below, never with a blocking write: a child that echoes its
    // input while we are still writing would otherwise deadlock us past the timeout.
    std::size_t stdin_off = 0;
    int stdin_fd = in_pipe[1];
    if (options.stdin_data.empty()) {
        ::close(stdin_fd);
        stdin_fd = -1;
    } else {
        ::fcntl(stdin_fd, F_SETFL, ::fcntl(stdin_fd, F_GETFL) | O_NONBLOCK);
    }

    ProcessResult result;
    auto deadline = options.timeout ? Clock::now() + *options.timeout : Clock::time_point::max();
    int status = 0;
    bool reaped = false;
    bool term_sent = false;
    Clock::time_point kill_at{};
    char buffer[4096];
    while (!reaped) {
        auto now = Clock::now();
        if (now >= deadline && !term_sent) {
            result.timed_out = true;
            kill_group(pid, SIGTERM);
            term_sent = true;
            kill_at = now + std::chrono::seconds(2);
        }
        if (term_sent && now >= kill_at) {
            kill_group(pid, SIGKILL);
        }
        if (stdin_fd >= 0) {
            ssize_t n = write_no_sigpipe(stdin_fd, options.stdin_data.data() + stdin_off,
                                         options.stdin_data.size() - stdin_off);
            if (n > 0) {
                stdin_off += static_cast<std::size_t>(n);
            }
            if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
                stdin_off == options.stdin_data.size()) {
                ::close(stdin_fd);
                stdin_fd = -1;
            }
        }
        if (out_pipe[0] >= 0) {
            pollfd pfd{out_pipe[0], POLLIN, 0};
            int rc = ::poll(&pfd, 1, stdin_fd >= 0 ? 5 : 50);
            if (rc > 0) {
                ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
                if (n > 0) {
                    result.output.append(buffer, static_cast<std::size_t>(n));
                    continue;
                }
                // EOF: the child (and everything holding the pipe) closed it.
                ::close(out_pipe[0]);
                out_pipe[0] = -1;
            }
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::lock_guard<std::mutex> lock(g_running_mutex);
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            running_groups().erase(pid);
            if (g_refusing) {
                // Stopping: whatever the leader left in its group (it had SIGTERM too) goes now,
                // while the group's id cannot have been reused yet.
                kill_group(pid, SIGKILL);
            }
        }
    }
    // Drain what the child wrote just before exiting; bounded so a grandchild holding the pipe
    // open cannot block us.
    if (out_pipe[0] >= 0) {
        auto drain_until = Clock::now() + std::chrono::milliseconds(200);
        while (Clock::now() < drain_until) {
            pollfd pfd{out_pipe[0], POLLIN, 0};
            if (::poll(&pfd, 1, 20) <= 0) {
                break;
            }
            ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
            if (n <= 0) {
                break;
            }
            result.output.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(out_pipe[0]);
    }
    if (stdin_fd >= 0) {
        ::close(stdin_fd);
    }
    if (result.timed_out) {
        kill_group(pid, SIGKILL);  // leftovers in the group
    }
    if (WIFEXITED(status)) {
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

void refuse_new_children() {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    g_refusing = true;
}

int kill_running_children(int sig) {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    for (pid_t group : running_groups()) {
        kill_group(group, sig);
    }
    return static_cast<int>(running_groups().size());
}

}  // namespace preflight::core
