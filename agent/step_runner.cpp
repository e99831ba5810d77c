#include "agent/step_runner.hpp"

#include <csignal>
#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/stop_signal.hpp"
#include "core/process.hpp"
#include "plugins/check.hpp"

namespace preflight::agent {
namespace {

core::CheckResult error_result(const std::string& check, std::string detail) {
    core::CheckResult r;
    r.check = check;
    r.verdict = core::Verdict::error;
    r.detail = std::move(detail);
    return r;
}

}  // namespace

core::CheckResult run_step(const core::msg::Run& run, const StepEnvironment& env,
                           std::chrono::steady_clock::time_point deadline) {
    auto check = plugins::make_check(run.check);
    if (!check) {
        return error_result(run.check, "this agent has no check named '" + run.check + "'");
    }
    plugins::CheckContext ctx;
    ctx.node = env.node;
    ctx.sysfs_root = env.sysfs_root;
    ctx.bind_address = run.bind_address.empty() ? env.local_address : run.bind_address;
    if (run.group) {
        ctx.group.id = run.group->id;
        ctx.group.rank = run.group->rank;
        ctx.group.members = run.group->members;
    }
    ctx.kv = env.kv;
    ctx.deadline = deadline;
    ctx.cancel = env.cancel;
    ctx.exec_policy = env.exec_policy;
    return check->run(ctx, run.params);
}

std::vector<std::string> step_capabilities() {
    std::vector<std::string> out;
    for (const auto& entry : plugins::builtin_checks()) {
        out.push_back(entry.spec.name);
    }
    return out;
}

core::CheckResult busy_result(const std::string& check, bool wedged) {
    return error_result(check, wedged ? "agent is stuck in an earlier check that never returned"
                                      : "agent is busy with another step");
}

core::CheckResult hung_result(const std::string& check, double deadline_s) {
    // Formatted, not cast: the value came from a frame.
    return error_result(check, fmt::format("check did not return within its deadline of {:.0f} s "
                                           "(hung)",
                                           deadline_s));
}

core::CheckResult interrupted_result(const std::string& check, int sig) {
    return error_result(check, interrupted_detail(sig));
}

int join_or_leave(std::thread& worker, bool done, int exit_code) {
    if (!worker.joinable()) {
        return exit_code;
    }
    if (done) {
        worker.join();
        return exit_code;
    }
    spdlog::warn("exiting with a check still running");
    if (const int stopped = core::kill_running_children(SIGKILL); stopped > 0) {
        spdlog::warn("stopped {} program(s) the check had started", stopped);
    }
    spdlog::default_logger()->flush();
    std::_Exit(exit_code);
}

}  // namespace preflight::agent
