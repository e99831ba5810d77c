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

namespace {

// The parent's ends of a child's pipes while run_process waits for it.
struct ParentEnds {
    int out = -1;            // the child's stdout+stderr; -1 at EOF or when they go to a file
    int in = -1;             // the child's stdin; -1 once all is written or it cannot be
    std::size_t in_off = 0;  // bytes of stdin_data written so far
};

bool refusing_new_children() {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    return g_refusing;
}

// Lists the child's group for kill_running_children.
void track(pid_t pid) {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    running_groups().insert(pid);
    if (g_refusing) {  // the stop began while it was being forked
        kill_group(pid, SIGKILL);
    }
}

// Starts argv with its stdout+stderr on a pipe (or appended to options.stdout_path) and its stdin
// on another; ends receives the parent's ends. The child's ends are closed here.
Result<pid_t> start_child(const std::vector<std::string>& argv, const ProcessOptions& options,
                          ParentEnds& ends) {
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
    track(*spawned);
    ends.out = out_pipe[0];
    ends.in = in_pipe[1];
    return *spawned;
}

// stdin is fed from the wait loop, never with a blocking write: a child that echoes its input
// while we are still writing would otherwise deadlock us past the timeout.
void prepare_stdin(ParentEnds& ends, const std::string& data) {
    if (data.empty()) {
        ::close(ends.in);
        ends.in = -1;
    } else {
        ::fcntl(ends.in, F_SETFL, ::fcntl(ends.in, F_GETFL) | O_NONBLOCK);
    }
}

// Writes what the pipe takes of the rest of stdin; closes it when all is written or the write
// failed for good.
void feed_stdin(ParentEnds& ends, const std::string& data) {
    if (ends.in < 0) {
        return;
    }
    ssize_t n = write_no_sigpipe(ends.in, data.data() + ends.in_off, data.size() - ends.in_off);
    if (n > 0) {
        ends.in_off += static_cast<std::size_t>(n);
    }
    if ((n < 0 && errno != EAGAIN && errno != EINTR) || ends.in_off == data.size()) {
        ::close(ends.in);
        ends.in = -1;
    }
}

// Waits briefly for output; true when bytes were read (the caller reads again at once). Closes
// the pipe at EOF: the child (and everything holding the pipe) closed it.
bool read_output(ParentEnds& ends, std::string& output) {
    if (ends.out < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return false;
    }
    pollfd pfd{ends.out, POLLIN, 0};
    if (::poll(&pfd, 1, ends.in >= 0 ? 5 : 50) <= 0) {
        return false;
    }
    char buffer[4096];
    ssize_t n = ::read(ends.out, buffer, sizeof buffer);
    if (n > 0) {
        output.append(buffer, static_cast<std::size_t>(n));
        return true;
    }
    ::close(ends.out);
    ends.out = -1;
    return false;
}

// Reaps the child when it has exited, unlisting it in the same locked step.
bool try_reap(pid_t pid, int& status) {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    if (::waitpid(pid, &status, WNOHANG) != pid) {
        return false;
    }
    running_groups().erase(pid);
    if (g_refusing) {
        // Stopping: whatever the leader left in its group (it had SIGTERM too) goes now, while
        // the group's id cannot have been reused yet.
        kill_group(pid, SIGKILL);
    }
    return true;
}

// The deadline of one child: SIGTERM to its group when it passes, SIGKILL 2 s later and on.
struct Deadline {
    Clock::time_point at;
    bool term_sent = false;
    Clock::time_point kill_at{};

    // True once the deadline has passed.
    bool enforce(pid_t pid) {
        const auto now = Clock::now();
        if (now >= at && !term_sent) {
            kill_group(pid, SIGTERM);
            term_sent = true;
            kill_at = now + std::chrono::seconds(2);
        }
        if (term_sent && now >= kill_at) {
            kill_group(pid, SIGKILL);
        }
        return term_sent;
    }
};

// Waits for the child to exit, feeding its stdin and collecting its output; returns the wait
// status and sets result.timed_out when the deadline killed it.
int wait_child(pid_t pid, const ProcessOptions& options, ParentEnds& ends, ProcessResult& result) {
    Deadline deadline{options.timeout ? Clock::now() + *options.timeout : Clock::time_point::max()};
    int status = 0;
    while (true) {
        if (deadline.enforce(pid)) {
            result.timed_out = true;
        }
        feed_stdin(ends, options.stdin_data);
        if (read_output(ends, result.output)) {
            continue;
        }
        if (try_reap(pid, status)) {
            return status;
        }
    }
}

// Drains what the child wrote just before exiting; bounded so a grandchild holding the pipe
// open cannot block us.
void drain_output(ParentEnds& ends, std::string& output) {
    if (ends.out < 0) {
        return;
    }
    char buffer[4096];
    auto drain_until = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < drain_until) {
        pollfd pfd{ends.out, POLLIN, 0};
        if (::poll(&pfd, 1, 20) <= 0) {
            break;
        }
        ssize_t n = ::read(ends.out, buffer, sizeof buffer);
        if (n <= 0) {
            break;
        }
        output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(ends.out);
    ends.out = -1;
}

}  // namespace

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
    if (refusing_new_children()) {
        return Error{"not starting '" + (argv.empty() ? std::string() : argv[0]) +
                     "': this process is stopping"};
    }
    ParentEnds ends;
    auto started = start_child(argv, options, ends);
    if (!started) {
        return started.error();
    }
    const pid_t pid = *started;
    prepare_stdin(ends, options.stdin_data);

    ProcessResult result;
    const int status = wait_child(pid, options, ends, result);
    drain_output(ends, result.output);
    if (ends.in >= 0) {
        ::close(ends.in);
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
