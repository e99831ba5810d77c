// Stages judge, act and report: verdicts per node from the results, actions from the verdicts,
// and the report files.
#include <spdlog/spdlog.h>

#include "controller/run/drift.hpp"
#include "controller/run/evaluator.hpp"
#include "controller/run/stages.hpp"
#include "core/exit_code.hpp"
#include "core/log.hpp"
#include "outcome/actions.hpp"
#include "outcome/report/json.hpp"

namespace preflight::controller {

void judge_run(RunContext& run) {
    const auto& cfg = run.options.config;
    // Nodes whose agent was lost: every check they did not finish is already an error result;
    // checks they never got to become errors naming the loss.
    auto lost = run.server->hub().lost_nodes();
    std::vector<NodeInput> inputs;
    for (const auto& n : run.options.nodes) {
        NodeInput in;
        in.node = n;
        if (auto u = run.unreachable.find(n.name); u != run.unreachable.end()) {
            in.unreachable = u->second;
        }
        // Moved: nothing reads run.results after the judgement (the report holds them).
        in.results = std::move(run.results[n.name]);
        for (const auto& check : run.checks) {
            if (in.unreachable.empty() && in.results.count(check) == 0) {
                core::CheckResult r;
                r.check = check;
                r.verdict = core::Verdict::error;
                auto l = lost.find(n.name);
                r.detail = run.interrupted() ? "not run: " + run.interrupted_because()
                           : l != lost.end() ? "not run: agent lost: " + l->second
                                             : "not run";
                in.results[check] = r;
            }
        }
        inputs.push_back(std::move(in));
    }
    run.report.nodes = evaluate(std::move(inputs), run.checks, cfg.evaluation);
    // Settings that disagree with the rest of the cohort (DCQCN, MTU, rates): a warn per node.
    add_drift(run.report.nodes, cfg.evaluation);
}

void act_on_verdicts(RunContext& run) {
    // An interrupted run never acts: its suspects were not all confirmed.
    auto& report = run.report;
    report.interrupted = run.interrupted();
    if (report.interrupted) {
        return;
    }
    core::SystemCommandRunner runner;
    const auto policy = outcome::breaker_policy(run.options.config.actions, run.options.force);
    const auto sinks = outcome::make_sinks(
        run.options.sinks,
        outcome::SinkContext{run.options.config, policy, runner, std::chrono::seconds(30)});
    const auto pointers = outcome::sink_pointers(sinks);
    outcome::plan_actions(report, run.options.config.actions, pointers);
    if (run.options.apply && run.options.force) {
        outcome::force_past_breaker(report);
    }
    if (run.options.apply) {
        outcome::apply_actions(report, pointers);
    }
}

void write_run_report(RunContext& run) {
    auto& report = run.report;
    report.exit_code = report.interrupted ? core::to_int(core::ExitCode::inconclusive)
                                          : outcome::exit_code_for(report);
    report.finished_at = core::utc_now_rfc3339();
    ledger_record(run);
    if (auto st =
            outcome::write_report_files(report, run.options.report_dir, run.options.json_path);
        !st) {
        spdlog::error("writing the report: {}", st.error().message);
        // Without its report the run is a run error, unless a stronger code already says that
        // nodes failed or that the breaker refused (both printed on the terminal too).
        if (report.exit_code != core::to_int(core::ExitCode::failed) &&
            report.exit_code != core::to_int(core::ExitCode::breaker)) {
            report.exit_code = core::to_int(core::ExitCode::run_error);
        }
    }
}

}  // namespace preflight::controller
