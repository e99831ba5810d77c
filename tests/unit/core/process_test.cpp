#include "core/process.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <climits>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A process is gone when kill(pid, 0) fails or it is a zombie nobody has reaped yet (its parent
// was killed and the reaper is slow; it runs no code any more).
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0) {
        return errno == ESRCH;
    }
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) {
        return true;
    }
    auto close_paren = line.rfind(')');
    return close_paren != std::string::npos && close_paren + 2 < line.size() &&
           line[close_paren + 2] == 'Z';
}

bool wait_gone(pid_t pid, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (!process_gone(pid)) {
        if (Clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class TempDir {
  public:
    TempDir() {
        m_path = fs::temp_directory_path() /
                 ("preflight_process_test_" + std::to_string(::getpid()) + "_" +
                  std::to_string(Clock::now().time_since_epoch().count()));
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    const fs::path& path() const { return m_path; }

  private:
    fs::path m_path;
};

// Reads a pid a child wrote to path, waiting for it to appear.
pid_t read_pid(const fs::path& path, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
        std::ifstream in(path);
        pid_t pid = 0;
        if (in >> pid && pid > 0) {
            return pid;
        }
        std::this_thread::sleep_for(10ms);
    }
    return -1;
}

TEST(RunProcess, CapturesOutputAndExitCode) {
    auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->exit_code, 3);
    EXPECT_EQ(r->signal, 0);
    EXPECT_FALSE(r->timed_out);
    EXPECT_FALSE(r->ok());
    EXPECT_THAT(r->output, HasSubstr("out\n"));
    EXPECT_THAT(r->output, HasSubstr("err\n"));
    EXPECT_EQ(r->describe(), "exit 3");
}

TEST(RunProcess, SuccessIsOk) {
    auto r = run_process({"true"});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_TRUE(r->ok());
    EXPECT_EQ(r->describe(), "exit 0");
}

TEST(RunProcess, KilledBySignal) {
    auto r = run_process({"sh", "-c", "kill -9 $$"});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, -1);
    EXPECT_EQ(r->signal, SIGKILL);
    EXPECT_FALSE(r->ok());
    EXPECT_EQ(r->describe(), "killed by signal 9");
}

TEST(RunProcess, ArgumentsArePassedLiterallyWithoutAShell) {
    for (const std::string arg : {"a; rm -rf /tmp/x", "$(echo pwned)", "`id`", "a b  c", "*",
                                  "x && y | z > /dev/null", "'quoted' \"double\"", "$HOME"}) {
        auto r = run_process({"printf", "%s", arg});
        ASSERT_TRUE(r.ok()) << r.error().message;
        EXPECT_EQ(r->exit_code, 0);
        EXPECT_EQ(r->output, arg);
    }
}

TEST(RunProcess, LargeOutputIsCapturedCompletely) {
    auto r = run_process({"head", "-c", "1000000", "/dev/zero"});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_EQ(r->output.size(), 1000000u);
}

TEST(RunProcess, MissingProgramIsAnError) {
    auto r = run_process({"/nonexistent/preflight-no-such-program", "x"});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("cannot execute"));
    EXPECT_THAT(r.error().message, HasSubstr("preflight-no-such-program"));
    auto not_on_path = run_process({"preflight-no-such-program-on-path"});
    EXPECT_FALSE(not_on_path.ok());
}

TEST(RunProcess, EmptyArgvIsAnError) {
    EXPECT_FALSE(run_process({}).ok());
}

TEST(RunProcess, TimeoutKillsTheWholeProcessGroup) {
    TempDir dir;
    auto pid_file = dir.path() / "grandchild.pid";
    ProcessOptions options;
    options.timeout = 300ms;
    auto start = Clock::now();
    auto r = run_process(
        {"sh", "-c", "sleep 30 & echo $! > \"$1\"; sleep 30", "sh", pid_file.string()}, options);
    auto took = Clock::now() - start;
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->timed_out);
    EXPECT_FALSE(r->ok());
    EXPECT_THAT(r->describe(), HasSubstr("timed out"));
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
    pid_t grandchild = read_pid(pid_file, 1s);
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(wait_gone(grandchild, 2s)) << "grandchild " << grandchild << " survived";
}

// A process that leaves with std::_Exit past a budget first stops what its checks started:
// kill_running_children reaches the whole group of a child another thread is waiting for, and a
// reaped child is no longer listed.
TEST(RunProcess, KillRunningChildrenStopsTheGroupsOfChildrenInFlight) {
    TempDir dir;
    auto pid_file = dir.path() / "grandchild.pid";
    EXPECT_EQ(kill_running_children(0), 0);
    Result<ProcessResult> r = Error{"not run"};
    std::thread waiter([&] {
        r = run_process({"sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pid_file.string()});
    });
    pid_t grandchild = read_pid(pid_file, 5s);
    ASSERT_GT(grandchild, 0);
    // The child is listed once run_process is back from the fork, which can be after the script
    // wrote its pid file (seen under ASan in CI): wait for it; signal 0 only counts.
    const auto listed_by = Clock::now() + 5s;
    while (kill_running_children(0) == 0 && Clock::now() < listed_by) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(kill_running_children(0), 1);
    auto start = Clock::now();
    EXPECT_EQ(kill_running_children(SIGKILL), 1);
    waiter.join();
    EXPECT_LT(Clock::now() - start, 5s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->signal, SIGKILL) << r->describe();
    EXPECT_TRUE(wait_gone(grandchild, 2s)) << "grandchild " << grandchild << " survived";
    EXPECT_EQ(kill_running_children(0), 0);
}

TEST(RunProcess, TimeoutEscalatesToSigkill) {
    ProcessOptions options;
    options.timeout = 100ms;
    auto start = Clock::now();
    auto r = run_process({"sh", "-c", "trap '' TERM; sleep 30"}, options);
    auto took = Clock::now() - start;
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->timed_out);
    EXPECT_LT(took, 5s);
}

TEST(RunProcess, EnvironmentOverrides) {
    ProcessOptions options;
    options.env = {{"PREFLIGHT_TEST_VAR", "value with spaces"}, {"HOME", "/overridden"}};
    auto r = run_process({"sh", "-c", "printf '%s|%s' \"$PREFLIGHT_TEST_VAR\" \"$HOME\""}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->output, "value with spaces|/overridden");
    // The rest of the environment is inherited.
    ::setenv("PREFLIGHT_TEST_INHERITED", "yes", 1);
    auto inherited = run_process({"sh", "-c", "printf %s \"$PREFLIGHT_TEST_INHERITED\""});
    ::unsetenv("PREFLIGHT_TEST_INHERITED");
    ASSERT_TRUE(inherited.ok());
    EXPECT_EQ(inherited->output, "yes");
}

TEST(RunProcess, StdinData) {
    ProcessOptions options;
    options.stdin_data = "line one\nline two\n";
    auto r = run_process({"cat"}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->output, "line one\nline two\n");
}

TEST(RunProcess, StdinIsEmptyWithoutData) {
    ProcessOptions options;
    options.timeout = 5s;
    auto r = run_process({"cat"}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->timed_out);
    EXPECT_EQ(r->output, "");
}

TEST(RunProcess, StdinDataIgnoredByTheChildDoesNotHurt) {
    ProcessOptions options;
    options.stdin_data = std::string(1 << 20, 'x');  // more than a pipe holds
    options.timeout = 5s;
    auto r = run_process({"true"}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 0);
}

TEST(RunProcess, OutputToFileIsAppended) {
    TempDir dir;
    auto path = dir.path() / "out.log";
    ProcessOptions options;
    options.stdout_path = path.string();
    ASSERT_TRUE(run_process({"sh", "-c", "echo one; echo two >&2"}, options).ok());
    auto r = run_process({"echo", "three"}, options);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->output, "");
    EXPECT_EQ(read_file(path), "one\ntwo\nthree\n");
}

TEST(RunProcess, SystemCommandRunnerRuns) {
    SystemCommandRunner runner;
    auto r = runner.run({"printf", "%s", "hi"}, {});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->output, "hi");
}

TEST(ChildProcess, SpawnRunningTerminate) {
    auto child = ChildProcess::spawn({"sleep", "30"}, {}, "");
    ASSERT_TRUE(child.ok()) << child.error().message;
    pid_t pid = child->pid();
    EXPECT_GT(pid, 0);
    EXPECT_TRUE(child->running());
    EXPECT_FALSE(child->exit_status().has_value());
    EXPECT_FALSE(child->wait_for(50ms));
    auto start = Clock::now();
    child->terminate(1s);
    EXPECT_LT(Clock::now() - start, 2s);
    EXPECT_FALSE(child->running());
    auto status = child->exit_status();
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFSIGNALED(*status));
    EXPECT_EQ(WTERMSIG(*status), SIGTERM);
    EXPECT_TRUE(process_gone(pid));
}

TEST(ChildProcess, WaitForExitStatus) {
    auto child = ChildProcess::spawn({"sh", "-c", "exit 4"}, {}, "");
    ASSERT_TRUE(child.ok());
    EXPECT_TRUE(child->wait_for(5s));
    EXPECT_FALSE(child->running());
    auto status = child->exit_status();
    ASSERT_TRUE(status.has_value());
    ASSERT_TRUE(WIFEXITED(*status));
    EXPECT_EQ(WEXITSTATUS(*status), 4);
}

TEST(ChildProcess, OutputPathAndEnvironment) {
    TempDir dir;
    auto path = dir.path() / "agent.log";
    auto child = ChildProcess::spawn({"sh", "-c", "echo \"$PREFLIGHT_CHILD\"; echo e >&2"},
                                     {{"PREFLIGHT_CHILD", "hello"}}, path.string());
    ASSERT_TRUE(child.ok());
    ASSERT_TRUE(child->wait_for(5s));
    EXPECT_EQ(read_file(path), "hello\ne\n");
}

TEST(ChildProcess, StdinDataIsTheChildsInputThenEndOfFile) {
    TempDir dir;
    auto path = dir.path() / "child.log";
    // The child reads one line, then sees the end of its input (not our terminal, not a hang).
    auto child =
        ChildProcess::spawn({"sh", "-c", "IFS= read -r line; echo \"got $line\"; cat; echo eof"},
                            {}, path.string(), "the key\n");
    ASSERT_TRUE(child.ok()) << child.error().message;
    ASSERT_TRUE(child->wait_for(5s));
    EXPECT_EQ(read_file(path), "got the key\neof\n");
    // Without stdin data the child's stdin is /dev/null, as before.
    auto plain = ChildProcess::spawn({"sh", "-c", "cat; echo eof"}, {}, path.string());
    ASSERT_TRUE(plain.ok());
    ASSERT_TRUE(plain->wait_for(5s));
    EXPECT_EQ(read_file(path), "eof\n");
}

TEST(ChildProcess, StdinDataLongerThanAPipeWriteIsRefused) {
    auto child = ChildProcess::spawn({"true"}, {}, "", std::string(PIPE_BUF + 1, 'k'));
    ASSERT_FALSE(child.ok());
    EXPECT_THAT(child.error().message, HasSubstr("longer than PIPE_BUF"));
}

TEST(ChildProcess, LogPathThatIsASymlinkIsRefusedAndNothingRuns) {
    // A launcher's <node>.log in a shared directory: a planted link must not aim root's write.
    TempDir dir;
    auto victim = dir.path() / "victim";
    std::ofstream(victim) << "precious";
    auto log = dir.path() / "n1.log";
    fs::create_symlink(victim, log);
    auto marker = dir.path() / "ran";
    auto child = ChildProcess::spawn({"touch", marker.string()}, {}, log.string());
    ASSERT_FALSE(child.ok());
    EXPECT_EQ(child.error().message,
              log.string() + " is a symbolic link; refusing to write through it");
    EXPECT_EQ(read_file(victim), "precious");
    EXPECT_FALSE(fs::exists(marker));
}

TEST(ChildProcess, LogPathThatIsAHardLinkIsReplacedNotTruncated) {
    TempDir dir;
    auto victim = dir.path() / "victim";
    std::ofstream(victim) << "precious";
    auto log = dir.path() / "n1.log";
    fs::create_hard_link(victim, log);
    auto child = ChildProcess::spawn({"echo", "agent"}, {}, log.string());
    ASSERT_TRUE(child.ok()) << child.error().message;
    ASSERT_TRUE(child->wait_for(5s));
    EXPECT_EQ(read_file(log), "agent\n");
    EXPECT_EQ(read_file(victim), "precious");
}

TEST(RunProcess, OutputPathThatIsASymlinkIsRefused) {
    TempDir dir;
    auto victim = dir.path() / "victim";
    std::ofstream(victim) << "precious";
    auto out = dir.path() / "out.log";
    fs::create_symlink(victim, out);
    ProcessOptions options;
    options.stdout_path = out.string();
    auto r = run_process({"echo", "x"}, options);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("is a symbolic link"));
    EXPECT_EQ(read_file(victim), "precious");
}

// In a child process (a death test): refusing is for good, for the whole process.
TEST(RunProcessDeathTest, NothingStartsOnceTheProcessIsStopping) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            refuse_new_children();
            auto r = run_process({"true"}, {});
            std::_Exit(!r.ok() && r.error().message.find("stopping") != std::string::npos ? 7 : 1);
        },
        ::testing::ExitedWithCode(7), "");
}

TEST(RunProcessDeathTest, AStoppingProcessKillsWhatALeaderLeftInItsGroup) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    TempDir dir;
    auto pid_file = dir.path() / "straggler.pid";
    EXPECT_EXIT(
        {
            // The leader exits on SIGTERM; its child ignores it and would outlive the stop.
            std::thread check([&] {
                run_process({"sh", "-c", "(trap '' TERM; sleep 30) & echo $! > \"$1\"; wait", "sh",
                             pid_file.string()},
                            {});
            });
            const pid_t straggler = read_pid(pid_file, 5s);
            refuse_new_children();
            kill_running_children(SIGTERM);
            check.join();
            std::_Exit(straggler > 0 && wait_gone(straggler, 2s) ? 7 : 1);
        },
        ::testing::ExitedWithCode(7), "");
}

TEST(ChildProcess, SpawnMissingProgramIsAnError) {
    auto child = ChildProcess::spawn({"/nonexistent/preflight-agent"}, {}, "");
    ASSERT_FALSE(child.ok());
    EXPECT_THAT(child.error().message, HasSubstr("cannot execute"));
}

TEST(ChildProcess, TerminateEscalatesAndKillsTheGroup) {
    TempDir dir;
    auto pid_file = dir.path() / "grandchild.pid";
    auto child = ChildProcess::spawn(
        {"sh", "-c", "trap '' TERM; sleep 30 & echo $! > \"$1\"; wait", "sh", pid_file.string()},
        {}, "");
    ASSERT_TRUE(child.ok());
    pid_t grandchild = read_pid(pid_file, 2s);
    ASSERT_GT(grandchild, 0);
    auto start = Clock::now();
    child->terminate(200ms);
    EXPECT_LT(Clock::now() - start, 3s);
    EXPECT_FALSE(child->running());
    EXPECT_TRUE(wait_gone(grandchild, 2s));
}

TEST(ChildProcess, DestructorKills) {
    TempDir dir;
    auto pid_file = dir.path() / "grandchild.pid";
    pid_t pid = -1;
    pid_t grandchild = -1;
    {
        auto child = ChildProcess::spawn(
            {"sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pid_file.string()}, {}, "");
        ASSERT_TRUE(child.ok());
        pid = child->pid();
        grandchild = read_pid(pid_file, 2s);
        EXPECT_TRUE(child->running());
    }
    EXPECT_TRUE(process_gone(pid));
    ASSERT_GT(grandchild, 0);
    EXPECT_TRUE(wait_gone(grandchild, 2s));
}

TEST(ChildProcess, MoveTransfersOwnership) {
    auto spawned = ChildProcess::spawn({"sleep", "30"}, {}, "");
    ASSERT_TRUE(spawned.ok());
    ChildProcess a = std::move(spawned.value());
    pid_t pid = a.pid();
    ChildProcess b(std::move(a));
    EXPECT_EQ(a.pid(), -1);  // NOLINT(bugprone-use-after-move): moved-from state is specified
    EXPECT_FALSE(a.running());
    EXPECT_EQ(b.pid(), pid);
    EXPECT_TRUE(b.running());
    ChildProcess c;
    c = std::move(b);
    EXPECT_EQ(c.pid(), pid);
    EXPECT_TRUE(c.running());
    c.terminate(1s);
    EXPECT_TRUE(process_gone(pid));
}

TEST(ChildProcess, DefaultConstructedIsInert) {
    ChildProcess child;
    EXPECT_EQ(child.pid(), -1);
    EXPECT_FALSE(child.running());
    EXPECT_TRUE(child.wait_for(0ms));
    child.terminate(0ms);
}

}  // namespace
}  // namespace preflight::core

TEST(RunProcess, LargeStdinEchoedBackDoesNotDeadlock) {
    preflight::core::ProcessOptions opts;
    opts.stdin_data.assign(1 << 20, 'x');
    opts.timeout = std::chrono::seconds(10);
    auto r = preflight::core::run_process({"cat"}, opts);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(r->timed_out);
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_EQ(r->output.size(), std::size_t{1} << 20);
}

TEST(RunProcess, ChildThatIgnoresStdinDoesNotKillUsWithSigpipe) {
    preflight::core::ProcessOptions opts;
    opts.stdin_data.assign(4 << 20, 'x');
    opts.timeout = std::chrono::seconds(10);
    auto r = preflight::core::run_process({"true"}, opts);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->exit_code, 0);
}
