#include "controller/run/evaluator.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/stats.hpp"

namespace preflight::controller {
namespace {

std::string cohort_key(const core::Node& node, const std::string& label) {
    auto it = node.labels.find(label);
    return it == node.labels.end() ? std::string() : it->second;
}

std::string cohort_name(const std::string& key, const std::string& label) {
    return key.empty() ? "(no " + label + " label)" : label + "=" + key;
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

}  // namespace

std::optional<std::string> judged_metric(const std::string& check) {
    // Collectives are judged on bus bandwidth, the figure nccl-tests reports (busbw_gbps).
    if (check.rfind("collective.", 0) == 0) {
        return std::string("busbw_gbps");
    }
    return std::nullopt;
}

std::vector<outcome::NodeReport> evaluate(const std::vector<NodeInput>& inputs,
                                          const std::vector<std::string>& checks,
                                          const core::EvaluationConfig& config) {
    std::vector<outcome::NodeReport> reports(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        reports[i].name = inputs[i].node.name;
        reports[i].labels = inputs[i].node.labels;
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
                nc.verdict = it->second.verdict;
                nc.metrics = it->second.metrics;
                nc.detail = it->second.detail;
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
        std::optional<double> floor;
        if (auto f = config.floors.find(check); f != config.floors.end()) {
            if (auto m = f->second.find(*metric); m != f->second.end()) {
                floor = m->second;
            }
        }
        // Cohorts of nodes that produced the metric.
        std::map<std::string, std::vector<std::size_t>> cohorts;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            auto& nc = reports[i].checks.back();
            bool measured =
                (nc.verdict == core::Verdict::pass || nc.verdict == core::Verdict::warn) &&
                nc.metrics.count(*metric) != 0;
            if (measured) {
                cohorts[cohort_key(inputs[i].node, config.cohort_label)].push_back(i);
            } else if (nc.verdict == core::Verdict::pass) {
                // A collective that "passed" without its figure is missing data: never a pass.
                nc.verdict = core::Verdict::error;
                nc.detail = "result has no " + *metric;
            }
        }
        for (const auto& [key, members] : cohorts) {
            std::vector<double> values;
            for (auto i : members) {
                values.push_back(reports[i].checks.back().metrics.at(*metric));
            }
            bool enough = static_cast<int>(values.size()) >= config.min_cohort;
            double med = core::median(values);
            double dev = core::mad(values);
            // Most of the cohort slow: the median moved under the floor, so it is no reference;
            // judge against the floor only and say so.
            const bool median_under_floor = enough && floor && med < *floor;
            for (auto i : members) {
                auto& nc = reports[i].checks.back();
                double value = nc.metrics.at(*metric);
                // Keep what the check said (for collectives: the groups and partners behind the
                // figure) after a verdict of ours, so the operator sees the evidence.
                std::string evidence = nc.detail.empty() ? "" : " [" + nc.detail + "]";
                nc.floor = floor;
                if (enough) {
                    nc.median = med;
                    nc.mad = dev;
                    nc.threshold = config.threshold_fraction * med;
                    nc.fraction_of_median = med > 0 ? value / med : 0.0;
                }
                if (floor && value < *floor) {
                    nc.verdict = core::Verdict::fail;
                    nc.detail =
                        fmt::format("{} {:.4g} is under the floor {:.4g}", *metric, value, *floor);
                } else if (enough && !median_under_floor && value < *nc.threshold) {
                    nc.verdict = core::Verdict::fail;
                    nc.detail = fmt::format(
                        "{} {:.4g} is {:.0f}% of the {} median {:.4g} (threshold {:.0f}%)", *metric,
                        value, 100.0 * *nc.fraction_of_median,
                        cohort_name(key, config.cohort_label), med,
                        100.0 * config.threshold_fraction);
                } else if (!enough && !floor) {
                    nc.verdict = core::Verdict::warn;
                    nc.detail = fmt::format(
                        "not judged: {} has {} measured node(s), fewer than min_cohort {}, and no "
                        "floor is configured",
                        cohort_name(key, config.cohort_label), values.size(), config.min_cohort);
                }
                if (median_under_floor) {
                    nc.threshold = floor;
                    nc.detail += fmt::format(
                        "; the {} median {:.4g} is under the floor {:.4g} (most of the cohort is "
                        "slow): judged against the floor only",
                        cohort_name(key, config.cohort_label), med, *floor);
                }
            }
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
