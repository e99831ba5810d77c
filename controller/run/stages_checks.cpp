// Stages node-local, rounds and confirm: the checks themselves, as steps on the connected agents.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/run/stages.hpp"
#include "core/checked_number.hpp"
#include "core/params.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// One node-local check on the given nodes at once; results land in run.results. Returns the
// number of steps run.
int run_node_check(RunContext& run, const std::string& check, const std::string& phase,
                   const std::vector<std::string>& nodes, const std::string& what) {
    auto params = step_params(run.options.config, check, phase);
    double deadline_s = step_timeout_s(check, params, 30.0);
    std::vector<StepRequest> requests;
    for (const auto& node : nodes) {
        requests.push_back(StepRequest{node, check, params, deadline_s, std::nullopt, ""});
    }
    auto deadline = Clock::now() +
                    core::clamp_to_millis(deadline_s + run.options.config.deadlines.step_slack_s);
    run.progress(what, 0, requests.size());
    for (auto& outcome : run.server->hub().run_steps(
             requests, deadline, [&](std::size_t d, std::size_t t) { run.progress(what, d, t); })) {
        run.results[outcome.node][check] = std::move(outcome.result);
    }
    ++run.step_batches;
    return static_cast<int>(requests.size());
}

bool brackets(const RunContext& run, const std::string& check) {
    const auto& around = run.plan.around_collectives;
    return std::find(around.begin(), around.end(), check) != around.end();
}

GroupCheckPlan group_plan(const RunContext& run, const std::string& check) {
    const auto& cfg = run.options.config;
    GroupCheckPlan plan;
    plan.check = check;
    if (const auto* spec = plugins::find_check_spec(check); spec && !spec->metric.name.empty()) {
        plan.metric = spec->metric.name;
    }
    plan.params = step_params(cfg, check);
    plan.step_deadline_s = step_timeout_s(check, plan.params, 60.0);
    plan.controller_slack_s = cfg.deadlines.step_slack_s;
    plan.threshold_fraction = cfg.evaluation.threshold_fraction;
    plan.min_cohort = cfg.evaluation.min_cohort;
    plan.cohort_label = cfg.evaluation.cohort_label;
    if (auto f = cfg.evaluation.floors.find(check); f != cfg.evaluation.floors.end()) {
        if (auto m = f->second.find(plan.metric); m != f->second.end()) {
            plan.floor = m->second;
        }
    }
    if (!run.plan.leaf_of.empty()) {
        plan.topology_of = [&leaf_of = run.plan.leaf_of](const std::string& node) {
            auto it = leaf_of.find(node);
            return it == leaf_of.end() ? std::string() : it->second;
        };
    } else if (!cfg.evaluation.topology_label.empty()) {
        plan.topology_of = [&run, label = cfg.evaluation.topology_label](const std::string& node) {
            const auto& labels = run.by_name.at(node).labels;
            auto it = labels.find(label);
            return it == labels.end() ? std::string() : it->second;
        };
    }
    return plan;
}

// Round 4: the "end" reading replaces each node's "begin" result, so the report shows the growth
// over the collectives. A baseline without its end reading (agent lost, interrupted) judged
// nothing: it becomes an error, never the begin step's pass.
void read_counters_after(RunContext& run) {
    auto started = Clock::now();
    int steps = 0;
    std::set<std::string> ended;  // "check/node"
    auto present = run.interrupted() ? std::vector<std::string>{} : run.still_connected();
    for (const auto& check : run.plan.around_collectives) {
        if (run.interrupted()) {
            break;
        }
        steps += run_node_check(run, check, "end", present,
                                fmt::format("round 4 (counters after collectives): {}", check));
        for (const auto& node : present) {
            ended.insert(check + "/" + node);
        }
    }
    for (const auto& check : run.plan.around_collectives) {
        for (auto& [node, by_check] : run.results) {
            auto it = by_check.find(check);
            if (it != by_check.end() && ended.count(check + "/" + node) == 0) {
                it->second.verdict = core::Verdict::error;
                it->second.detail =
                    "baseline taken, but the counters after the collectives were "
                    "not read (" +
                    (run.interrupted() ? run.interrupted_because() : std::string("agent lost")) +
                    ")";
            }
        }
    }
    if (steps > 0) {
        run.report.rounds.push_back(
            {4, "counters after collectives", steps, seconds_since(started)});
    }
}

}  // namespace

nlohmann::json step_params(const core::RunConfig& cfg, const std::string& check,
                           const std::string& phase) {
    auto it = cfg.check_params.find(check);
    nlohmann::json params = it != cfg.check_params.end() ? it->second : nlohmann::json::object();
    if (!phase.empty()) {
        params["phase"] = phase;
    }
    return params;
}

double step_timeout_s(const std::string& check, const nlohmann::json& params, double fallback) {
    const auto* spec = plugins::find_check_spec(check);
    auto resolved = spec ? core::resolve_params(spec->params, params) : core::Error{"unknown"};
    const auto& p = resolved ? resolved.value() : params;
    auto t = p.find("timeout_s");
    return t != p.end() && t->is_number() ? t->get<double>() : fallback;
}

std::string RunContext::cohort_of(const std::string& node) const {
    const auto& labels = by_name.at(node).labels;
    auto it = labels.find(options.config.evaluation.cohort_label);
    return it == labels.end() ? std::string() : it->second;
}

std::vector<std::string> RunContext::still_connected() {
    auto connected = server->hub().connected_nodes();
    std::vector<std::string> out;
    std::copy_if(live.begin(), live.end(), std::back_inserter(out),
                 [&](const std::string& n) { return connected.count(n) != 0; });
    return out;
}

void run_node_local(RunContext& run) {
    auto started = Clock::now();
    int steps = 0;
    for (const auto& check : run.plan.node_checks) {
        if (run.interrupted()) {
            break;
        }
        steps += run_node_check(run, check, brackets(run, check) ? "begin" : "", run.live,
                                fmt::format("round 0 (node-local): {}", check));
    }
    if (steps > 0) {
        run.report.rounds.push_back({0, "node-local checks", steps, seconds_since(started)});
    }
}

void run_rounds(RunContext& run) {
    StepRunner runner = [&run](const std::vector<StepRequest>& requests, Clock::time_point deadline,
                               const std::function<void(std::size_t, std::size_t)>& progress) {
        return run.server->hub().run_steps(requests, deadline, progress);
    };
    CohortOf cohort_of = [&run](const std::string& node) { return run.cohort_of(node); };
    for (const auto& check : run.plan.group_checks) {
        if (run.interrupted()) {
            break;
        }
        run.searches.push_back(locate_suspects(runner, group_plan(run, check),
                                               run.still_connected(), cohort_of, run.progress));
    }
}

void confirm_and_close(RunContext& run) {
    CohortOf cohort_of = [&run](const std::string& node) { return run.cohort_of(node); };
    for (std::size_t i = 0; i < run.searches.size(); ++i) {
        auto outcome = confirm_suspects(std::move(run.searches[i]), cohort_of);
        for (auto& [node, r] : outcome.per_node) {
            run.results[node][run.plan.group_checks[i]] = std::move(r);
        }
        run.step_batches += static_cast<int>(outcome.rounds.size());
        auto& report = run.report;
        report.groups.insert(report.groups.end(), outcome.groups.begin(), outcome.groups.end());
        report.rounds.insert(report.rounds.end(), outcome.rounds.begin(), outcome.rounds.end());
    }
    run.searches.clear();
    if (!run.plan.around_collectives.empty()) {
        read_counters_after(run);
    }
}

}  // namespace preflight::controller
