#include "controller/run/orchestrator.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/run/stages.hpp"
#include "core/auth.hpp"
#include "core/build_info.hpp"
#include "core/log.hpp"

namespace preflight::controller {
namespace {

using Clock = std::chrono::steady_clock;

// Progress on stderr (stdout carries the report): on a terminal one line per round rewritten in
// place; otherwise plain lines, one when a round completes. Shows steps done and elapsed time.
class Progress {
  public:
    explicit Progress(bool enabled)
        : m_enabled(enabled), m_tty(::isatty(2) != 0), m_start(Clock::now()) {}
    void update(const std::string& what, std::size_t done, std::size_t total) {
        if (!m_enabled) {
            return;
        }
        if (what != m_what) {
            m_what = what;
            m_round_start = Clock::now();
        }
        double round_s = std::chrono::duration<double>(Clock::now() - m_round_start).count();
        double run_s = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (m_tty) {
            std::fprintf(stderr, "\r\033[K%s: %zu/%zu steps done, %.1f s (run %.1f s)",
                         what.c_str(), done, total, round_s, run_s);
            if (done == total) {
                std::fprintf(stderr, "\n");
            }
        } else if (done == total) {
            std::fprintf(stderr, "%s: %zu/%zu steps done, %.1f s (run %.1f s)\n", what.c_str(),
                         done, total, round_s, run_s);
        }
        std::fflush(stderr);
    }

  private:
    bool m_enabled;
    bool m_tty;
    Clock::time_point m_start;
    Clock::time_point m_round_start;
    std::string m_what;
};

// Ctrl-C: shutting the agents down completes every pending step as an error at once, so the run
// ends promptly and still writes its report.
class InterruptWatch {
  public:
    explicit InterruptWatch(RunContext& run)
        : m_thread([this, &run] {
              while (!m_done) {
                  run.budget_passed();
                  if (run.interrupted()) {
                      spdlog::warn("{}: stopping agents and writing the report",
                                   run.interrupted_because());
                      run.server->hub().shutdown(run.interrupted_because());
                      return;
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(100));
              }
          }) {}
    ~InterruptWatch() { stop(); }
    void stop() {
        m_done = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }

  private:
    std::atomic<bool> m_done{false};
    std::thread m_thread;
};

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

nlohmann::json effective_config(const core::RunConfig& cfg) {
    nlohmann::json j = {
        {"source", cfg.source},
        {"checks", cfg.checks},
        {"threshold_fraction", cfg.evaluation.threshold_fraction},
        {"min_cohort", cfg.evaluation.min_cohort},
        {"max_relative_mad", cfg.evaluation.max_relative_mad},
        {"cohort_label", cfg.evaluation.cohort_label},
        {"max_action_fraction", cfg.actions.max_action_fraction},
        {"min_actions", cfg.actions.min_actions},
        {"max_actions", cfg.actions.max_actions},
        {"action_targets", cfg.actions.targets},
    };
    if (!cfg.job.is_null()) {
        j["job"] = cfg.job;  // the reports then carry a job-impact section
    }
    return j;
}

// Runs one stage, logs it and records its time in the report.
template <class Fn>
void stage(RunContext& run, const char* name, Fn&& fn) {
    spdlog::debug("stage {}: start", name);
    auto started = Clock::now();
    fn(run);
    double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    run.report.stages.push_back({name, seconds});
    spdlog::info("stage {}: {:.3f} s", name, seconds);
}

}  // namespace

std::string make_run_id() {
    return core::utc_now("%Y%m%dT%H%M%SZ") + "-" + core::random_hex(3);
}

std::string dry_run_preflight(const RunOptions& options) {
    outcome::RunReport report;
    report.run_id = make_run_id();
    auto plan = plan_run(options, report);
    RunContext run{options, std::move(plan), std::move(report)};
    return describe_launch(run);
}

outcome::RunReport run_preflight(const RunOptions& options) {
    auto wall_start = Clock::now();
    outcome::RunReport report;
    report.run_id = make_run_id();
    report.preflight_version = core::build_version();
    report.preflight_commit = core::build_commit();
    report.started_at = core::utc_now_rfc3339();
    report.apply = options.apply;
    report.config = effective_config(options.config);
    auto plan = plan_run(options, report);
    RunContext run{options, std::move(plan), std::move(report)};
    run.report.stages.push_back(
        {"plan", std::chrono::duration<double>(Clock::now() - wall_start).count()});
    Progress progress(options.progress);
    run.progress = [&progress](const std::string& what, std::size_t d, std::size_t t) {
        progress.update(what, d, t);
    };
    if (options.budget_s > 0.0)
        stage(run, "budget", plan_within_budget);
    stage(run, "launch", launch_agents);
    stage(run, "connect", connect_agents);
    run.budget_passed();  // connecting alone may have used it up: then no check starts
    const double cpu_start = cpu_seconds();
    {
        InterruptWatch watch(run);
        stage(run, "node-local", run_node_local);
        stage(run, "rounds", run_rounds);
        stage(run, "confirm", confirm_and_close);
    }
    const double cpu_rounds = cpu_seconds() - cpu_start;
    if (run.budget_spent)
        run.report.ledger["budget"]["used_up"] = true;
    auto stopping = Clock::now();
    run.server->stop();
    run.plan.launcher->stop();
    const double stop_s = std::chrono::duration<double>(Clock::now() - stopping).count();
    stage(run, "judge", judge_run);
    if (!options.config.ledger.url.empty())
        stage(run, "history", ledger_history);
    stage(run, "act", act_on_verdicts);
    run.report.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
    auto reporting = Clock::now();
    write_run_report(run);
    // One line of figures for bench/controller_scale.sh: the check stages plus judge and act are
    // what the controller adds beyond the checks' own time.
    std::map<std::string, double> took;
    for (const auto& s : run.report.stages) {
        took[s.name] = s.seconds;
    }
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    spdlog::info(
        "timing: agents connected {:.3f} s; rounds {:.3f} s in {} step batches; stop agents "
        "{:.3f} s; evaluate+plan {:.3f} s; ledger {:.3f} s; reports {:.3f} s; nodes {}; peak RSS "
        "{:.1f} MiB; controller CPU in rounds {:.3f} s",
        took["plan"] + took["launch"] + took["connect"],
        took["node-local"] + took["rounds"] + took["confirm"], run.step_batches, stop_s,
        took["judge"] + took["act"], took["history"] + took["record"],
        std::chrono::duration<double>(Clock::now() - reporting).count() - took["record"],
        options.nodes.size(), static_cast<double>(usage.ru_maxrss) / 1024.0, cpu_rounds);
    return std::move(run.report);
}

}  // namespace preflight::controller
