// fork_exec and kill_group (process_spawn.hpp): the one place that forks and execs.
#include "core/process_spawn.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

extern char** environ;

namespace preflight::core::spawn {
namespace {

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

}  // namespace

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

}  // namespace preflight::core::spawn
