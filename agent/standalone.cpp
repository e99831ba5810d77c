// Standalone (controller-less) node checks for a Slurm Prolog or a Kubernetes init container; see
// standalone.hpp.
#include "agent/standalone.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/stop_signal.hpp"
#include "core/atomic_file.hpp"
#include "core/checked_number.hpp"
#include "core/exit_code.hpp"
#include "core/judge.hpp"
#include "core/process.hpp"
#include "outcome/actions.hpp"
#include "outcome/report/terminal.hpp"
#include "plugins/check.hpp"

namespace preflight::agent {
namespace {

using Clock = std::chrono::steady_clock;

std::string default_node_name() {
    if (const char* n = std::getenv("SLURMD_NODENAME"); n != nullptr && *n != '\0') {
        return n;
    }
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) == 0) {
        std::string host(buf);
        return host.substr(0, host.find('.'));
    }
    return {};
}

core::RunConfig prolog_config(const StandaloneOptions& options) {
    auto catalog = plugins::param_catalog();
    if (!options.config.empty()) {
        return core::load_config(options.config, catalog);
    }
    // No configuration: the cheapest useful check, with its own defaults; the prolog and the
    // health check add the fast GPU checks (Xids in the kernel log, NVML health over about 1 s)
    // on a node with the NVIDIA driver loaded.
    std::string checks = "link.netdev";
    if ((options.profile == "prolog" || options.profile == "health") &&
        std::filesystem::exists(std::filesystem::path(options.sysfs_root) / "proc/driver/nvidia")) {
        checks += ", gpu.xid, gpu.health";
    }
    return core::parse_config("checks: [" + checks + "]\n", "<prolog defaults>", catalog);
}

// The kubelet bind-mounts this file into the container: write it in place (a rename would fail).
void write_termination_log(const std::string& path, const std::string& text) {
    if (path.empty()) {
        return;
    }
    if (auto st = core::write_file_in_place(path, text); !st) {
        spdlog::error("writing the termination log: {}", st.error().message);
    }
}

// Waits for the checks until the deadline or a stop signal, whichever comes first; polled,
// because the signal handler can only set a flag. True when every check finished.
bool wait_for_checks(std::future<void>& finished, Clock::time_point deadline) {
    while (stop_signal() == 0) {
        const auto next = std::min(deadline, Clock::now() + std::chrono::milliseconds(20));
        if (finished.wait_until(next) == std::future_status::ready) {
            return true;
        }
        if (next == deadline) {
            return false;
        }
    }
    return finished.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// A program a check started (all_reduce_perf) must not outlive us and hold the GPUs the job is
// about to use. Past the budget its group is killed at once; on a stop signal it gets SIGTERM and
// k_stop_grace to end before SIGKILL.
void stop_check_programs(int sig, double budget_s, std::future<void>& finished) {
    if (sig != 0) {
        core::refuse_new_children();
        core::kill_running_children(SIGTERM);
        finished.wait_for(k_stop_grace);
        if (const int left = core::kill_running_children(SIGKILL); left > 0) {
            spdlog::warn("{}: {} program(s) still running after SIGTERM were killed",
                         interrupted_detail(sig), left);
        }
        return;
    }
    if (const int stopped = core::kill_running_children(SIGKILL); stopped > 0) {
        spdlog::warn("stopped {} program(s) a check left running past the {:.0f} s budget", stopped,
                     budget_s);
    }
}

// The node-local checks of cfg, in its order.
std::vector<std::string> node_local_checks(const core::RunConfig& cfg) {
    std::vector<std::string> out;
    for (const auto& check : cfg.checks) {
        const auto* spec = plugins::find_check_spec(check);
        if (spec != nullptr && spec->phase == core::Phase::node_local) {
            out.push_back(check);
        }
    }
    return out;
}

// An `error` result for each check that had none when the run was cut (the budget, sig 0) or
// interrupted (a stop signal): the first one says why, the others that they did not run.
void add_unfinished(std::vector<core::CheckResult>& results, const std::vector<std::string>& checks,
                    int sig, double budget_s) {
    bool first = true;
    for (const auto& check : checks) {
        bool have = false;
        for (const auto& r : results) {
            have = have || r.check == check;
        }
        if (!have) {
            core::CheckResult r;
            r.check = check;
            r.verdict = core::Verdict::error;
            r.detail = sig == 0 ? fmt::format("not finished within the {:.0f} s budget", budget_s)
                                : (first ? "" : "not run: ") + interrupted_detail(sig);
            results.push_back(r);
            first = false;
        }
    }
}

// The health check's pass count and resume, or the prolog's or epilog's drain of a failed node
// (a could-not-judge only under --on-error block); the exit code after it.
int act_on_outcome(StandaloneOutcome& outcome, const std::string& node, int sig, int rc,
                   const StandaloneOptions& options, const StandaloneHooks& hooks,
                   const core::ActionsConfig& actions, core::CommandRunner& runner) {
    const bool health = options.profile == "health";
    const bool blocked = outcome.verdict == core::Verdict::error && rc != 0;
    if (health) {
        const int hrc = hooks.apply_health(outcome, node, sig == 0, options, actions, runner);
        return sig != 0 ? rc : hrc;
    } else if (sig == 0 && (outcome.verdict == core::Verdict::fail || blocked)) {
        if (blocked) {
            outcome.finding = outcome::FindingClass::check_error;
        }
        const char* job = std::getenv("SLURM_JOB_ID");
        std::string run = options.run_id;
        if (run.empty()) {
            run = job == nullptr ? options.profile : std::string("job ") + job;
            if (job != nullptr && options.profile == "epilog") {
                run = "epilog of job " + std::string(job);
            }
        }
        describe_drain(outcome, run);
        if (options.drain && hooks.drain(outcome, node, run, options, actions, runner)) {
            return core::to_int(core::ExitCode::breaker);
        }
    }
    return rc;
}

}  // namespace

int run_standalone(const StandaloneOptions& options, core::CommandRunner& runner,
                   const StandaloneHooks& hooks) {
    const auto start = Clock::now();
    const std::string node = options.node.empty() ? default_node_name() : options.node;
    if (node.empty()) {
        std::fprintf(stderr, "preflight-agent: no node name (--node, $SLURMD_NODENAME)\n");
        return 2;
    }
    const bool health = options.profile == "health";
    if (auto rc = refuse_bad_options(options, hooks)) {
        return *rc;
    }
    // slurmd starts a health check every interval whatever the last one is doing: one at a time
    // per node, or two runs would count the same passes and race on the state file.
    core::UniqueFd health_lock;
    if (health) {
        if (auto rc = lock_health_check(options, hooks, node, health_lock)) {
            return *rc;
        }
    }
    core::RunConfig cfg;
    try {
        cfg = prolog_config(options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "preflight-agent: %s\n", e.what());
        write_termination_log(
            options.termination_log,
            fmt::format("preflight {}: configuration error (exit 2)\n{}\n", node, e.what()));
        return 2;
    }
    std::map<std::string, std::map<std::string, double>> baseline;
    std::string baseline_run;
    if (!options.baseline.empty()) {
        if (auto b = load_baseline(options.baseline, node, &baseline_run); b) {
            baseline = std::move(b.value());
        } else {
            // A missing or broken baseline loses a comparison, not the node: floors still apply.
            spdlog::warn("{}; judging against floors only", b.error().message);
        }
    }

    // The checks run on a worker so that the budget holds even for a check that hangs: at the
    // deadline we report what finished and leave.
    const auto deadline = start + core::clamp_to_millis(options.budget_s);
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    auto done = std::make_shared<std::vector<core::CheckResult>>();
    auto mutex = std::make_shared<std::mutex>();
    // The health check reuses and plans nothing (refused above); it only keeps gpu.xid's memory.
    PrologPlan memory = prepare_prolog(options, node, cfg, node_local_checks(cfg));
    const std::vector<std::string> node_checks = memory.checks;
    const auto xid_since = memory.xid_since;
    std::promise<void> finished;
    auto finished_future = finished.get_future();
    std::thread worker([=, p = std::move(finished)]() mutable {
        for (const auto& check : node_checks) {
            if (*cancel) {
                break;
            }
            plugins::CheckContext ctx;
            ctx.node = node;
            ctx.sysfs_root = options.sysfs_root;
            ctx.deadline = deadline;
            ctx.cancel = cancel.get();
            ctx.exec_policy = &options.exec_policy;
            nlohmann::json params = cfg.check_params.count(check) ? cfg.check_params.at(check)
                                                                  : nlohmann::json::object();
            if (check == "gpu.xid" && xid_since) {
                params["since"] = *xid_since;
            }
            auto result = plugins::make_check(check)->run(ctx, params);
            std::lock_guard<std::mutex> lock(*mutex);
            done->push_back(std::move(result));
        }
        p.set_value();
    });
    const bool in_time = wait_for_checks(finished_future, deadline);
    const int sig = in_time ? 0 : stop_signal();  // 0: the budget ran out
    StandaloneOutcome outcome;
    {
        // Taken before any program is killed: a check returning after that measured our kill.
        std::lock_guard<std::mutex> lock(*mutex);
        outcome.results = memory.reuse ? memory.reuse->results : *done;
    }
    if (in_time) {
        worker.join();
    } else {
        *cancel = true;
        worker.detach();  // cannot be interrupted; we _Exit below
        stop_check_programs(sig, options.budget_s, finished_future);
        add_unfinished(outcome.results, node_checks, sig, options.budget_s);
    }
    judge_standalone(outcome, cfg.evaluation, baseline, baseline_run);
    if (sig == 0) {
        finish_prolog(memory, outcome, options, node);
    }

    // Interrupted: nothing was judged in full, so exit 4 whatever --on-error says, and no drain.
    int rc = sig != 0 ? core::to_int(core::ExitCode::inconclusive)
                      : standalone_exit_code(outcome.verdict, options.on_error);
    // A failed check drains. A check that could not judge drains only when the operator chose
    // --on-error block: the start is refused then, and Slurm would drain the node for the failed
    // prolog anyway, with "Prolog error" and no cause; our reason says what kind of finding.
    outcome.profile = options.profile;
    rc = act_on_outcome(outcome, node, sig, rc, options, hooks, cfg.actions, runner);
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string json =
        outcome.to_json(node).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (!options.outcome_path.empty()) {
        if (auto st = core::write_file_atomic(options.outcome_path, json); !st) {
            spdlog::error("writing {}: {}", options.outcome_path, st.error().message);
        }
    }
    print_outcome(outcome, node, options, rc, sig);
    std::fflush(stderr);
    write_termination_log(options.termination_log, termination_message(node, outcome, rc));
    if (!in_time) {
        std::_Exit(rc);  // a check is still running on the detached worker
    }
    return rc;
}

}  // namespace preflight::agent
