// Standalone (controller-less) node checks for a Slurm Prolog or a Kubernetes init container; see
// standalone.hpp.
#include "agent/standalone.hpp"

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
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
    // No configuration: the cheapest useful check, with its own defaults.
    return core::parse_config("checks: [link.netdev]\n", "<prolog defaults>", catalog);
}

// Kubernetes keeps at most 4096 bytes of a termination message.
constexpr std::size_t k_termination_message_max = 4096;

// The kubelet bind-mounts this file into the container: write it in place (a rename would fail).
void write_termination_log(const std::string& path, const std::string& text) {
    if (path.empty()) {
        return;
    }
    std::ofstream out(path, std::ios::out | std::ios::trunc | std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
        spdlog::error("writing the termination log {}: failed", path);
    }
}

}  // namespace

int standalone_exit_code(core::Verdict verdict, OnError on_error) {
    switch (verdict) {
        case core::Verdict::fail:
            return 1;
        case core::Verdict::error:
            return on_error == OnError::block ? 3 : 0;
        default:
            return 0;
    }
}

std::string termination_message(const std::string& node, const StandaloneOutcome& outcome,
                                int exit_code) {
    std::string text = fmt::format("preflight {}: {} (exit {})", node,
                                   core::to_string(outcome.verdict), exit_code);
    if (outcome.verdict == core::Verdict::error) {
        text += exit_code == 0 ? ": could not judge, start allowed (--on-error=allow)"
                               : ": could not judge, start blocked (--on-error=block)";
    }
    text += "\n";
    for (const auto& r : outcome.reasons) {
        text += r + "\n";
    }
    if (text.size() > k_termination_message_max) {
        const std::string cut = "...\n";
        text.resize(k_termination_message_max - cut.size());
        text += cut;
    }
    return text;
}

nlohmann::json StandaloneOutcome::to_json(const std::string& node) const {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& r : results) {
        checks.push_back(r);
    }
    return {{"node", node},
            {"profile", "prolog"},
            {"verdict", std::string(core::to_string(verdict))},
            {"reasons", reasons},
            {"drain_reason", drain_reason},
            {"drain_error", drain_error},
            {"seconds", seconds},
            {"checks", checks}};
}

void judge_standalone(StandaloneOutcome& outcome, const core::EvaluationConfig& eval,
                      const std::map<std::string, std::map<std::string, double>>& baseline_metrics,
                      const std::string& baseline_run) {
    core::Verdict overall = core::Verdict::pass;
    for (auto& r : outcome.results) {
        // Floors and the baseline apply to metrics the config names in evaluation.floors: those
        // are the "higher is better" figures. Missing data for a named metric is never a pass.
        if (auto f = eval.floors.find(r.check);
            f != eval.floors.end() &&
            (r.verdict == core::Verdict::pass || r.verdict == core::Verdict::warn)) {
            for (const auto& [metric, floor] : f->second) {
                auto m = r.metrics.find(metric);
                if (m == r.metrics.end()) {
                    r.verdict = core::Verdict::error;
                    outcome.reasons.push_back(fmt::format("{}: no {} measured", r.check, metric));
                    continue;
                }
                std::optional<double> baseline;
                if (auto b = baseline_metrics.find(r.check); b != baseline_metrics.end()) {
                    if (auto bm = b->second.find(metric); bm != b->second.end()) {
                        baseline = bm->second;
                    }
                }
                core::JudgePolicy policy;
                policy.threshold_fraction = eval.threshold_fraction;
                policy.floor = floor;
                auto j = core::judge_against_baseline(metric, m->second, baseline, policy);
                if (j.verdict != core::Verdict::fail) {
                    continue;
                }
                r.verdict = core::Verdict::fail;
                if (j.reference.basis == "baseline") {
                    outcome.reasons.push_back(
                        fmt::format("{} {} {} < {}% of baseline {} (run {})", r.check, metric,
                                    outcome::format_significant(m->second),
                                    outcome::format_significant(eval.threshold_fraction * 100.0),
                                    outcome::format_significant(*baseline), baseline_run));
                } else {
                    outcome.reasons.push_back(fmt::format("{} {} {} < floor {}", r.check, metric,
                                                          outcome::format_significant(m->second),
                                                          outcome::format_significant(floor)));
                }
            }
        }
        if (r.verdict == core::Verdict::fail || r.verdict == core::Verdict::error) {
            const std::string why = fmt::format(
                "{} {}", r.check, r.detail.empty() ? core::to_string(r.verdict) : r.detail);
            bool named = false;
            for (const auto& reason : outcome.reasons) {
                named = named || reason.rfind(r.check + " ", 0) == 0 ||
                        reason.rfind(r.check + ":", 0) == 0;
            }
            if (!named) {
                outcome.reasons.push_back(why);
            }
        }
        if (r.verdict != core::Verdict::skip) {
            overall = core::worst(overall, r.verdict);
        }
    }
    if (outcome.results.empty()) {
        overall = core::Verdict::error;
        outcome.reasons.push_back("no node-local check configured");
    }
    outcome.verdict = overall;
}

core::Result<std::map<std::string, std::map<std::string, double>>> load_baseline(
    const std::string& path, const std::string& node, std::string* run_id) {
    std::ifstream in(path);
    if (!in) {
        return core::Error{"cannot open baseline " + path};
    }
    nlohmann::json report;
    try {
        report = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        return core::Error{"baseline " + path + ": " + e.what()};
    }
    std::map<std::string, std::map<std::string, double>> out;
    if (run_id != nullptr) {
        *run_id = report.value("run_id", std::string());
    }
    auto nodes = report.find("nodes");
    if (nodes == report.end() || !nodes->is_array()) {
        return core::Error{"baseline " + path + ": no nodes[] (not a preflight report.json)"};
    }
    for (const auto& n : *nodes) {
        if (!n.is_object() || n.value("name", std::string()) != node) {
            continue;
        }
        // Only figures the last run judged good are a baseline; a failed node's are not.
        if (n.value("verdict", std::string()) != "pass") {
            return out;
        }
        auto checks = n.find("checks");
        if (checks == n.end() || !checks->is_object()) {
            return out;
        }
        for (const auto& [check, c] : checks->items()) {
            auto metrics = c.find("metrics");
            if (metrics == c.end() || !metrics->is_object()) {
                continue;
            }
            for (const auto& [metric, value] : metrics->items()) {
                if (value.is_number()) {
                    out[check][metric] = value.get<double>();
                }
            }
        }
    }
    return out;
}

int run_standalone(const StandaloneOptions& options, core::CommandRunner& runner) {
    const auto start = Clock::now();
    const std::string node = options.node.empty() ? default_node_name() : options.node;
    if (node.empty()) {
        std::fprintf(stderr, "preflight-agent: no node name (--node, $SLURMD_NODENAME)\n");
        return 2;
    }
    if (!(options.budget_s > 0.0)) {
        std::fprintf(stderr, "preflight-agent: --budget-s must be > 0\n");
        return 2;
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
    const auto deadline =
        start + std::chrono::milliseconds(static_cast<long>(options.budget_s * 1000));
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    auto done = std::make_shared<std::vector<core::CheckResult>>();
    auto mutex = std::make_shared<std::mutex>();
    std::vector<std::string> node_checks;
    for (const auto& check : cfg.checks) {
        const auto* spec = plugins::find_check_spec(check);
        if (spec != nullptr && spec->phase == core::Phase::node_local) {
            node_checks.push_back(check);
        }
    }
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
            nlohmann::json params = cfg.check_params.count(check) ? cfg.check_params.at(check)
                                                                  : nlohmann::json::object();
            auto result = plugins::make_check(check)->run(ctx, params);
            std::lock_guard<std::mutex> lock(*mutex);
            done->push_back(std::move(result));
        }
        p.set_value();
    });
    const bool in_time = finished_future.wait_until(deadline) == std::future_status::ready;
    StandaloneOutcome outcome;
    {
        std::lock_guard<std::mutex> lock(*mutex);
        outcome.results = *done;
    }
    if (in_time) {
        worker.join();
    } else {
        *cancel = true;
        worker.detach();  // cannot be interrupted; we _Exit below
        // A program the check started (all_reduce_perf) must not outlive the budget and hold
        // the GPUs the job is about to use: stop its process group now.
        if (const int stopped = core::kill_running_children(SIGKILL); stopped > 0) {
            spdlog::warn("stopped {} program(s) a check left running past the {:.0f} s budget",
                         stopped, options.budget_s);
        }
        for (const auto& check : node_checks) {
            bool have = false;
            for (const auto& r : outcome.results) {
                have = have || r.check == check;
            }
            if (!have) {
                core::CheckResult r;
                r.check = check;
                r.verdict = core::Verdict::error;
                r.detail = fmt::format("not finished within the {:.0f} s budget", options.budget_s);
                outcome.results.push_back(r);
            }
        }
    }
    judge_standalone(outcome, cfg.evaluation, baseline, baseline_run);

    const int rc = standalone_exit_code(outcome.verdict, options.on_error);
    // A failed check drains. A check that could not judge drains only when the operator chose
    // --on-error block: the start is refused then, and Slurm would drain the node for the failed
    // prolog anyway, with "Prolog error" and no cause; our reason says which check and why.
    const bool blocked = outcome.verdict == core::Verdict::error && rc != 0;
    if (outcome.verdict == core::Verdict::fail || blocked) {
        std::string text;
        for (const auto& r : outcome.reasons) {
            text += (text.empty() ? "" : "; ") + r;
        }
        const char* job = std::getenv("SLURM_JOB_ID");
        std::string run =
            options.run_id.empty() ? (job ? std::string("job ") + job : "prolog") : options.run_id;
        outcome.drain_reason = outcome::sanitize_reason(
            (blocked ? "prolog could not judge: " : "prolog ") + text, "(" + run + ")");
        if (options.drain) {
            core::ProcessOptions po;
            po.timeout = std::chrono::seconds(10);
            auto res = runner.run(
                outcome::slurm_drain_argv(options.scontrol, node, outcome.drain_reason), po);
            if (!res) {
                outcome.drain_error = res.error().message;
            } else if (!res->ok()) {
                outcome.drain_error = res->describe() + ": " + res->output;
            }
        }
    }
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string json = outcome.to_json(node).dump(2) + "\n";
    if (!options.outcome_path.empty()) {
        if (auto st = core::write_file_atomic(options.outcome_path, json); !st) {
            spdlog::error("writing {}: {}", options.outcome_path, st.error().message);
        }
    }
    std::fprintf(stderr, "preflight prolog %s: %s in %.3f s%s%s\n", node.c_str(),
                 std::string(core::to_string(outcome.verdict)).c_str(), outcome.seconds,
                 outcome.drain_reason.empty() ? "" : " — ", outcome.drain_reason.c_str());
    for (const auto& r : outcome.reasons) {
        std::fprintf(stderr, "  %s\n", r.c_str());
    }
    if (!outcome.drain_error.empty()) {
        std::fprintf(stderr, "  draining failed: %s\n", outcome.drain_error.c_str());
    }
    if (outcome.verdict == core::Verdict::error) {
        std::fprintf(stderr, "  could not judge: exit %d (--on-error=%s)\n", rc,
                     options.on_error == OnError::block ? "block" : "allow");
    }
    std::fflush(stderr);
    write_termination_log(options.termination_log, termination_message(node, outcome, rc));
    if (!in_time) {
        std::_Exit(rc);  // a check is still running on the detached worker
    }
    return rc;
}

}  // namespace preflight::agent
