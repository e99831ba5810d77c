// One step's check on this node, off the session's I/O thread: the context from the run message and
// this agent's settings, and the results the session reports when a step cannot run.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/kv_store.hpp"
#include "core/model.hpp"
#include "core/protocol.hpp"
#include "plugins/exec_policy.hpp"

namespace preflight::agent {

struct StepEnvironment {
    std::string node;
    std::string sysfs_root;
    std::string local_address;  // bind address when the run message names none
    core::KvStore* kv = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    const plugins::ExecPolicy* exec_policy = nullptr;  // null: the default policy
};

// Runs the named check (error when this agent has none of that name). Never throws.
core::CheckResult run_step(const core::msg::Run& run, const StepEnvironment& env,
                           std::chrono::steady_clock::time_point deadline);

// The checks this agent can run, as its hello announces them.
std::vector<std::string> step_capabilities();

// A step refused because another is running (or stuck: wedged).
core::CheckResult busy_result(const std::string& check, bool wedged);
// A step whose check did not return within its deadline.
core::CheckResult hung_result(const std::string& check, double deadline_s);
// A step whose agent was stopped by signal sig while it ran ("agent interrupted by SIGTERM").
core::CheckResult interrupted_result(const std::string& check, int sig);

// At the end of a session: joins the worker when its check returned (done) and gives exit_code;
// otherwise leaves the process at once with exit_code (std::_Exit) after SIGKILL to the programs
// the check started. A hung check (a collective whose peer vanished) cannot be interrupted, and
// the node's agent must not hang with it.
int join_or_leave(std::thread& worker, bool done, int exit_code);

}  // namespace preflight::agent
