// Judging a standalone run's results (floors, baseline), its exit code and the words it leaves
// behind (outcome JSON, termination message); see standalone.hpp.
#include <fstream>

#include <fmt/format.h>

#include "agent/standalone.hpp"
#include "core/exit_code.hpp"
#include "core/judge.hpp"
#include "outcome/report/text.hpp"

namespace preflight::agent {

namespace {

// Kubernetes keeps at most 4096 bytes of a termination message.
constexpr std::size_t k_termination_message_max = 4096;

}  // namespace

int standalone_exit_code(core::Verdict verdict, OnError on_error) {
    switch (verdict) {
        case core::Verdict::fail:
            return core::to_int(core::ExitCode::failed);
        case core::Verdict::error:
            return on_error == OnError::block ? core::to_int(core::ExitCode::inconclusive) : 0;
        case core::Verdict::warn:
            // Warnings decide nothing: a gate that allows what it could not judge lets them
            // through too; under block they are the table's "warnings only".
            return on_error == OnError::block ? core::to_int(core::ExitCode::warnings) : 0;
        default:
            return 0;
    }
}

std::string termination_message(const std::string& node, const StandaloneOutcome& outcome,
                                int exit_code) {
    std::string text = fmt::format("preflight {}: {} (exit {})", node,
                                   core::to_string(outcome.verdict), exit_code);
    if (exit_code == core::to_int(core::ExitCode::breaker)) {
        text += ": not drained, the circuit breaker refused";
    } else if (outcome.verdict == core::Verdict::error) {
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

void describe_drain(StandaloneOutcome& outcome, const std::string& run) {
    outcome.drain_reason = std::string(outcome::fixed_reason(outcome.finding));
    std::string text;
    for (const auto& r : outcome.reasons) {
        text += (text.empty() ? "" : "; ") + r;
    }
    outcome.drain_comment =
        outcome::sanitize_reason(text, "run=" + run, outcome::k_max_comment_bytes);
}

nlohmann::json StandaloneOutcome::to_json(const std::string& node) const {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& r : results) {
        checks.push_back(r);
    }
    nlohmann::json out = {{"node", node},
                          {"profile", profile},
                          {"verdict", std::string(core::to_string(verdict))},
                          {"reasons", reasons},
                          {"drain_reason", drain_reason},
                          {"drain_comment", drain_comment},
                          {"drain_outcome", drain_outcome},
                          {"drain_error", drain_error},
                          {"seconds", seconds},
                          {"checks", checks}};
    // The class of what was found: none on a pass or skip (a consumer must not read a class there).
    if (verdict != core::Verdict::pass && verdict != core::Verdict::skip) {
        out["finding"] =
            std::string(outcome::finding_classes()[static_cast<std::size_t>(finding)].name);
    }
    if (!health.is_null()) {
        out["health"] = health;
    }
    for (const auto& [key, value] :
         {std::pair{"cache", &cache}, std::pair{"plan", &plan}, std::pair{"ledger", &ledger}}) {
        if (!value->is_null()) {
            out[key] = *value;
        }
    }
    return out;
}

void judge_standalone(StandaloneOutcome& outcome, const core::EvaluationConfig& eval,
                      const std::map<std::string, std::map<std::string, double>>& baseline_metrics,
                      const std::string& baseline_run) {
    core::Verdict overall = core::Verdict::pass;
    bool classified = false;  // the first failing finding names the class
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
                if (!classified) {
                    outcome.finding =
                        outcome::classify_finding(r.check, r.verdict, r.detail, metric);
                    classified = true;
                }
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
        if (r.verdict == core::Verdict::fail && !classified) {
            outcome.finding = outcome::classify_finding(r.check, r.verdict, r.detail);
            classified = true;
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
    if (!classified) {
        outcome.finding = overall == core::Verdict::fail ? outcome::FindingClass::check_failed
                                                         : outcome::FindingClass::check_error;
    }
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

}  // namespace preflight::agent
