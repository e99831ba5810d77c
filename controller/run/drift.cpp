#include "controller/run/drift.hpp"

#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "plugins/check.hpp"

namespace preflight::controller {

namespace {

std::string cohort_key(const outcome::NodeReport& node, const std::string& label) {
    auto it = node.labels.find(label);
    return it == node.labels.end() ? std::string() : it->second;
}

std::string format_value(double value) {
    return fmt::format("{:g}", value);
}

// "eth2.roce_np.prio3" -> {"eth2", "roce_np", "3"}; false for other shapes.
bool split_roce_metric(const std::string& metric, std::string& ifname, std::string& point,
                       std::string& prio) {
    const auto prio_pos = metric.rfind(".prio");
    if (prio_pos == std::string::npos || prio_pos == 0) {
        return false;
    }
    const auto point_pos = metric.rfind('.', prio_pos - 1);
    if (point_pos == std::string::npos) {
        return false;
    }
    ifname = metric.substr(0, point_pos);
    point = metric.substr(point_pos + 1, prio_pos - point_pos - 1);
    prio = metric.substr(prio_pos + 5);
    return !ifname.empty() && (point == "roce_np" || point == "roce_rp") && prio.size() == 1;
}

// The words for one node's deviating value next to the cohort's majority. A DCQCN enable
// ("eth2.roce_np.prio3") reads as on/off for its interface and priority.
std::string describe(const std::string& check, const std::string& metric, double value,
                     double majority, int agree, int total) {
    std::string ifname;
    std::string point;
    std::string prio;
    if (split_roce_metric(metric, ifname, point, prio)) {
        auto state = [](double v) { return v == 1.0 ? std::string("on") : std::string("off"); };
        return fmt::format("{}: {}: DCQCN {} on prio {} ({}); {} for {} of {} nodes", check, ifname,
                           state(value), prio, point, state(majority), agree, total);
    }
    return fmt::format("{}: {} {}; {} on {} of {} nodes", check, metric, format_value(value),
                       format_value(majority), agree, total);
}

}  // namespace

bool is_setting_metric(const std::string& check, const std::string& metric) {
    // Which metrics are settings is part of each check's spec (CheckSpec::settings).
    const auto* spec = plugins::find_check_spec(check);
    return spec != nullptr && spec->is_setting(metric);
}

std::map<std::string, std::vector<std::string>> drift_findings(
    const std::vector<outcome::NodeReport>& nodes, const core::EvaluationConfig& config) {
    // cohort -> (check, metric) -> value -> indices of nodes reporting it
    using Values = std::map<double, std::vector<std::size_t>>;
    std::map<std::string, std::map<std::pair<std::string, std::string>, Values>> cohorts;
    // A setting whose value is a digest of a text (gpu.health's driver and VBIOS versions)
    // comes with that text as a fact of the same name: findings name the text, not the digest.
    std::map<std::tuple<std::string, std::string, double>, std::string> texts;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto key = cohort_key(nodes[i], config.cohort_label);
        for (const auto& nc : nodes[i].checks) {
            // An error result's metrics may be partial; pass, warn and fail all carry readings.
            if (nc.verdict == core::Verdict::error || nc.verdict == core::Verdict::skip) {
                continue;
            }
            for (const auto& [metric, value] : nc.metrics) {
                if (is_setting_metric(nc.check, metric)) {
                    cohorts[key][{nc.check, metric}][value].push_back(i);
                    if (auto fact = nc.facts.find(metric); fact != nc.facts.end()) {
                        texts[{nc.check, metric, value}] = fact->second;
                    }
                }
            }
        }
    }

    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [cohort, settings] : cohorts) {
        for (const auto& [setting, values] : settings) {
            if (values.size() < 2) {
                continue;
            }
            int total = 0;
            double majority = 0.0;
            int agree = 0;
            for (const auto& [value, members] : values) {
                const int count = static_cast<int>(members.size());
                total += count;
                if (count > agree) {
                    agree = count;
                    majority = value;
                }
            }
            // A strict majority only: with a split fleet, which half is "right" is the
            // expectation's job (manifests/skus), not the vote's.
            if (total < config.min_cohort || 2 * agree <= total) {
                continue;
            }
            for (const auto& [value, members] : values) {
                if (value == majority) {
                    continue;
                }
                // An init-capture: clang before 16 (Debian 12 has 14) cannot capture a structured
                // binding.
                const auto text_of = [&texts,
                                      &key = setting](double v) -> std::optional<std::string> {
                    auto t = texts.find({key.first, key.second, v});
                    return t == texts.end() ? std::nullopt : std::optional<std::string>(t->second);
                };
                const auto mine = text_of(value), theirs = text_of(majority);
                for (auto i : members) {
                    out[nodes[i].name].push_back(
                        mine && theirs
                            ? fmt::format("{}: {} {}; {} on {} of {} nodes", setting.first,
                                          setting.second, *mine, *theirs, agree, total)
                            : describe(setting.first, setting.second, value, majority, agree,
                                       total));
                }
            }
        }
    }
    return out;
}

void add_drift(std::vector<outcome::NodeReport>& nodes, const core::EvaluationConfig& config) {
    const auto findings = drift_findings(nodes, config);
    for (auto& node : nodes) {
        const auto it = findings.find(node.name);
        if (it == findings.end()) {
            continue;
        }
        outcome::NodeCheck nc;
        nc.check = k_drift_check;
        nc.verdict = core::Verdict::warn;
        // Reasons are most severe first: drift warnings go before any skip lines.
        auto at = node.reasons.begin();
        while (at != node.reasons.end() && at->rfind("skip: ", 0) != 0) {
            ++at;
        }
        for (const auto& finding : it->second) {
            nc.detail += (nc.detail.empty() ? "" : "; ") + finding;
            at = node.reasons.insert(at, "warn: drift: " + finding) + 1;
        }
        nc.metrics["settings_drifted"] = static_cast<double>(it->second.size());
        node.checks.push_back(std::move(nc));
        if (node.verdict == core::Verdict::pass || node.verdict == core::Verdict::skip) {
            node.verdict = core::Verdict::warn;
        }
    }
}

}  // namespace preflight::controller
