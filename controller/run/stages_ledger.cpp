// The ledger's part of a run: the self-history rule after judge, the record before the report.
#include <chrono>
#include <set>

#include <spdlog/spdlog.h>

#include "controller/run/self_history.hpp"
#include "controller/run/stages.hpp"

namespace preflight::controller {

namespace {

void ledger_failed(RunContext& run, const std::string& what) {
    auto& info = run.report.ledger;
    info["error"] = what;
    spdlog::error(
        "{}: the verdicts and reports stand; record this run later with `preflight "
        "ledger import {}/report.json`",
        what, run.options.report_dir);
    run.ledger.reset();
}

}  // namespace

bool open_run_ledger(RunContext& run) {
    const auto& cfg = run.options.config.ledger;
    if (run.ledger)
        return true;
    auto& info = run.report.ledger;
    if (cfg.url.empty() || (info.is_object() && info.contains("error")))
        return false;  // none, or it already failed once this run (said then)
    if (!info.is_object())
        info = nlohmann::json::object();
    info["ledger"] = ledger::describe_url(cfg.url);
    info["kind"] = cfg.kind;
    info["recorded"] = false;
    try {
        run.ledger = ledger::Ledger::open(cfg.url, cfg.connect_timeout_s);
    } catch (const ledger::DbError& e) {
        ledger_failed(run, e.what());
        return false;
    }
    return true;
}

void ledger_history(RunContext& run) {
    if (!open_run_ledger(run) || run.interrupted())
        return;
    const auto& cfg = run.options.config.ledger;
    auto& info = run.report.ledger;
    const auto& rule = cfg.self_history;
    std::set<std::string> judged;
    for (const auto& n : run.report.nodes)
        for (const auto& c : n.checks)
            if (!c.judged_metric.empty())
                judged.insert(c.check);
    OwnHistory history;
    try {
        const std::string since = ledger::utc_time_ago(rule.window_days * 86400.0);
        for (const auto& check : judged) {
            for (auto& [node, values] :
                 run.ledger->recent_values(check, since, rule.max_samples, run.report.run_id))
                history[node][check] = std::move(values);
        }
    } catch (const ledger::DbError& e) {
        ledger_failed(run, e.what());
        return;
    }
    const int flagged = add_self_history(run.report.nodes, history, rule);
    info["self_history"] = {{"drop_fraction", rule.drop_fraction},
                            {"window_days", rule.window_days},
                            {"min_samples", rule.min_samples},
                            {"nodes_with_history", history.size()},
                            {"nodes_flagged", flagged}};
    if (flagged)
        spdlog::warn("self-history: {} node(s) slid below their own history", flagged);
}

void ledger_record(RunContext& run) {
    if (!run.ledger)
        return;
    const auto start = std::chrono::steady_clock::now();
    struct Timed {
        RunContext& run;
        std::chrono::steady_clock::time_point start;
        ~Timed() {
            run.report.stages.push_back(
                {"record",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
        }
    } timed{run, start};
    auto& info = run.report.ledger;
    try {
        ledger::RecordOptions how;
        how.kind = run.options.config.ledger.kind;
        how.recorded_by = "preflight run";
        const auto s = run.ledger->record(run.report, how);
        info["recorded"] = true;
        info["results"] = s.results;
        info["fingerprints_changed"] = s.fingerprints;
        info["certifications"] = s.certifications;
        spdlog::info("ledger {}: recorded {} results, {} new fingerprints, {} certifications",
                     run.ledger->describe(), s.results, s.fingerprints, s.certifications);
    } catch (const ledger::DbError& e) {
        ledger_failed(run, e.what());
    }
}

}  // namespace preflight::controller
