#include "controller/run/evaluator.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/judge.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

std::string cohort_key(const core::Node& node, const std::string& label) {
    auto it = node.labels.find(label);
    return it == node.labels.end() ? std::string() : it->second;
}

// Root-cause hints: a collective tells us a node is slow but not why; the node's own link checks
// often do (a port at 100G, a GPU at x8, GPUDirect off, DCQCN lost). Putting those findings next to
// the busBW verdict saves the operator from cross-reading the report. Only link.* findings are
// used: they are local to the node, so they explain its own figure rather than a partner's.
void add_link_hints(outcome::NodeReport& report) {
    std::vector<std::string> hints;
    for (const auto& nc : report.checks) {
        if (nc.check.rfind("link.", 0) == 0 &&
            (nc.verdict == core::Verdict::fail || nc.verdict == core::Verdict::warn)) {
            hints.push_back(nc.check + ": " + nc.detail);
        }
    }
    if (hints.empty()) {
        return;
    }
    std::string joined;
    for (const auto& hint : hints) {
        joined += (joined.empty() ? "" : "; ") + hint;
    }
    for (auto& nc : report.checks) {
        if (judged_metric(nc.check) && nc.verdict == core::Verdict::fail) {
            nc.detail += "; likely cause: " + joined;
        }
    }
}

core::JudgePolicy judge_policy(const core::EvaluationConfig& config, const std::string& check,
                               const std::string& metric) {
    core::JudgePolicy policy;
    policy.threshold_fraction = config.threshold_fraction;
    policy.min_cohort = config.min_cohort;
    policy.max_relative_mad = config.max_relative_mad;
    if (auto f = config.floors.find(check); f != config.floors.end()) {
        if (auto m = f->second.find(metric); m != f->second.end()) {
            policy.floor = m->second;
        }
    }
    return policy;
}

void apply_judgement(outcome::NodeCheck& nc, const core::Judgement& j) {
    const auto& ref = j.reference;
    nc.reference_basis = ref.basis;
    nc.judged_metric = ref.metric;
    nc.cohort = ref.cohort;
    nc.cohort_size = ref.cohort_size;
    nc.floor = ref.floor;
    nc.median = ref.median;
    nc.mad = ref.mad;
    nc.threshold = ref.threshold;
    nc.fraction_of_median = j.fraction_of_median;
    // The judge decides pass and warn results; an error (an unconfirmed suspect) stays an error:
    // its figure only took part in the reference.
    if (nc.verdict == core::Verdict::pass || nc.verdict == core::Verdict::warn) {
        if (j.verdict != core::Verdict::pass) {
            nc.verdict = j.verdict;
            nc.undecided = j.undecided;
            nc.detail = j.detail;
        }
    }
    if (!j.note.empty()) {
        nc.detail += "; " + j.note;
    }
}

}  // namespace

std::optional<std::string> judged_metric(const std::string& check) {
    const auto* spec = plugins::find_check_spec(check);
    if (spec == nullptr || !spec->fleet_judged()) {
        return std::nullopt;
    }
    return spec->metric.name;
}

std::vector<outcome::NodeReport> evaluate(std::vector<NodeInput> inputs,
                                          const std::vector<std::string>& checks,
                                          const core::EvaluationConfig& config) {
    std::vector<outcome::NodeReport> reports(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        reports[i].name = inputs[i].node.name;
        reports[i].labels = inputs[i].node.labels;
        reports[i].reference = inputs[i].node.reference;
    }

    for (const auto& check : checks) {
        // First, copy each node's own outcome (or its absence) for this check.
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            outcome::NodeCheck nc;
            nc.check = check;
            if (!inputs[i].unreachable.empty()) {
                nc.verdict = core::Verdict::error;
                nc.detail = "not run: agent unreachable";
            } else if (auto it = inputs[i].results.find(check); it != inputs[i].results.end()) {
                nc = outcome::node_check_of(std::move(it->second));  // each check once
                nc.check = check;
            } else {
                nc.verdict = core::Verdict::error;
                nc.detail = "no result";
            }
            reports[i].checks.push_back(std::move(nc));
        }

        auto metric = judged_metric(check);
        if (!metric) {
            continue;
        }
        // Every node with the figure is in its cohort's reference, whatever the verdict: an
        // unconfirmed suspect from the group rounds (error, with its figure) counts exactly as it
        // did when the rounds judged, so both see the same median.
        std::vector<core::Sample> samples;
        std::vector<std::size_t> owner;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            auto& nc = reports[i].checks.back();
            const bool has = nc.metrics.count(*metric) != 0;
            if (has && (nc.verdict == core::Verdict::pass || nc.verdict == core::Verdict::warn ||
                        nc.verdict == core::Verdict::error)) {
                samples.push_back({inputs[i].node.name,
                                   cohort_key(inputs[i].node, config.cohort_label),
                                   nc.metrics.at(*metric)});
                owner.push_back(i);
            } else if (nc.verdict == core::Verdict::pass) {
                // A collective that "passed" without its figure is missing data: never a pass.
                nc.verdict = core::Verdict::error;
                nc.detail = "result has no " + *metric;
            }
        }
        auto judged = core::judge_cohorts(*metric, samples, judge_policy(config, check, *metric),
                                          config.cohort_label);
        for (std::size_t k = 0; k < owner.size(); ++k) {
            apply_judgement(reports[owner[k]].checks.back(), judged.nodes[k]);
        }
    }

    for (auto& report : reports) {
        add_link_hints(report);
    }

    for (std::size_t i = 0; i < inputs.size(); ++i) {
        auto& report = reports[i];
        if (!inputs[i].unreachable.empty()) {
            report.verdict = core::Verdict::error;
            report.reasons.push_back("unreachable: " + inputs[i].unreachable);
            continue;
        }
        std::vector<const outcome::NodeCheck*> findings;
        bool any = false;
        report.verdict = core::Verdict::skip;
        for (const auto& nc : report.checks) {
            if (nc.verdict != core::Verdict::skip) {
                if (!any) {
                    report.verdict = nc.verdict;
                    any = true;
                } else {
                    report.verdict = core::worst(report.verdict, nc.verdict);
                }
            }
            if (nc.verdict != core::Verdict::pass) {
                findings.push_back(&nc);
            }
        }
        if (report.checks.empty()) {
            report.verdict = core::Verdict::error;
            report.reasons.push_back("no checks ran");
        }
        std::stable_sort(findings.begin(), findings.end(), [](const auto* a, const auto* b) {
            return core::severity(a->verdict) > core::severity(b->verdict);
        });
        for (const auto* nc : findings) {
            report.reasons.push_back(std::string(core::to_string(nc->verdict)) + ": " + nc->check +
                                     ": " + nc->detail);
        }
    }
    return reports;
}

}  // namespace preflight::controller
