// Running other programs: argv only (never a shell), an optional deadline after which the whole
// process group is killed, and captured output. Spawned children lead their own process group so
// that a kill reaches everything they started.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

struct ProcessOptions {
    std::optional<std::chrono::milliseconds> timeout;  // kill the group (SIGTERM, then SIGKILL)
    std::map<std::string, std::string> env;            // added to / overriding the inherited env
    std::string
        stdout_path;  // when set, stdout+stderr go to this file (appended) instead of captured
    std::string stdin_data;  // written to the child's stdin, which is then closed
};

struct ProcessResult {
    int exit_code = -1;  // -1 when killed by a signal
    int signal = 0;      // terminating signal, 0 when exited
    bool timed_out = false;
    std::string output;  // stdout and stderr interleaved (when captured)
    bool ok() const { return exit_code == 0 && !timed_out; }
    std::string describe() const;  // "exit 1", "killed by signal 9", "timed out after ..."
};

// Seam for code that runs commands (action sinks, launchers), so unit tests can fake it.
class CommandRunner {
  public:
    virtual ~CommandRunner() = default;
    virtual Result<ProcessResult> run(const std::vector<std::string>& argv,
                                      const ProcessOptions& options) = 0;
};

class SystemCommandRunner final : public CommandRunner {
  public:
    Result<ProcessResult> run(const std::vector<std::string>& argv,
                              const ProcessOptions& options) override;
};

// Runs argv to completion. Error only when the program could not be started.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options = {});

// Sends sig to the process group of every child that run_process is still waiting for, in any
// thread; returns how many groups there were (sig 0 only counts them). For a process about to
// leave with std::_Exit while a check's program runs (a budget or a hang): without this, that
// program would outlive us.
int kill_running_children(int sig);

// For a process that is stopping (a signal): from now on run_process starts nothing (an Error),
// and a child it was starting at this moment is killed as soon as it is listed, so that none slips
// past kill_running_children.
void refuse_new_children();

// The path of `name` in this executable's own directory (build/bin and an install prefix keep
// preflight and preflight-agent together); `name` itself when /proc/self/exe cannot be read.
std::string sibling_executable(const std::string& name);

// A child left running (an agent). Killing it kills its process group.
class ChildProcess {
  public:
    ChildProcess() = default;
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();  // kills and reaps a child that is still running

    // stdout and stderr go to output_path (truncated) when given, else inherit ours. stdin is
    // /dev/null, or a pipe holding stdin_data (at most PIPE_BUF bytes, e.g. a key) then closed.
    static Result<ChildProcess> spawn(const std::vector<std::string>& argv,
                                      const std::map<std::string, std::string>& env,
                                      const std::string& output_path,
                                      const std::string& stdin_data = {});

    pid_t pid() const { return m_pid; }
    bool running();                          // reaps if it has exited
    std::optional<int> exit_status() const;  // wait status once reaped
    void terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));
    // Waits up to timeout for exit; true when reaped.
    bool wait_for(std::chrono::milliseconds timeout);

  private:
    pid_t m_pid = -1;
    std::optional<int> m_status;
};

}  // namespace preflight::core
