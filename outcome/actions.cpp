#include "outcome/actions.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "outcome/report/text.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace {

constexpr std::string_view k_ellipsis = "\xE2\x80\xA6";  // U+2026, 3 bytes

bool is_space(char c) {
    return c == ' ';
}

// Collapses the spaces that sanitize_text left where newlines and tabs were, and trims both ends:
// a reason is one line in `sinfo -R`, not a paragraph.
std::string one_line(std::string_view text) {
    const std::string clean = sanitize_text(text);
    std::string out;
    out.reserve(clean.size());
    for (char c : clean) {
        if (is_space(c) && (out.empty() || is_space(out.back()))) {
            continue;
        }
        out += c;
    }
    while (!out.empty() && is_space(out.back())) {
        out.pop_back();
    }
    return out;
}

// The longest prefix of valid UTF-8 text that fits in max_bytes without splitting a sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) {
        return text;
    }
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut;
    }
    text = text.substr(0, cut);
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

// "90" rather than "90.0"; "87.5" kept.
std::string format_percent(double pct) {
    std::string s = fmt::format("{:.1f}", pct);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) {
        s.resize(s.size() - 2);
    }
    return s;
}

const NodeCheck* first_failing_check(const NodeReport& node) {
    for (const auto& c : node.checks) {
        if (c.verdict == core::Verdict::fail) {
            return &c;
        }
    }
    return nullptr;
}

}  // namespace

std::string sanitize_reason(std::string_view text, std::string_view suffix) {
    std::string body = one_line(text);
    if (body.compare(0, k_reason_prefix.size(), k_reason_prefix) != 0) {
        body = std::string(k_reason_prefix) + (body.empty() ? "" : " ") + body;
    }
    std::string tail = one_line(suffix);
    if (!tail.empty()) {
        tail.insert(tail.begin(), ' ');
    }
    if (body.size() + tail.size() <= k_max_reason_bytes) {
        return body + tail;
    }
    // Keep the run id when it is short enough: it is what ties a drained node back to its report.
    if (tail.size() <= k_max_reason_bytes / 2) {
        std::string out(utf8_prefix(body, k_max_reason_bytes - tail.size() - k_ellipsis.size()));
        return out + std::string(k_ellipsis) + tail;
    }
    const std::string all = body + tail;
    return std::string(utf8_prefix(all, k_max_reason_bytes - k_ellipsis.size())) +
           std::string(k_ellipsis);
}

std::string reason_for(const NodeReport& node, const std::string& run_id) {
    const std::string suffix = run_id.empty() ? std::string() : "(run " + run_id + ")";
    const NodeCheck* failing = first_failing_check(node);
    if (failing != nullptr && failing->median && failing->threshold && *failing->median != 0.0) {
        auto metric = headline_metric(*failing);
        // Under the floor it is a floor failure, worded by the evaluator below.
        const bool under_floor = failing->floor && metric && metric->second < *failing->floor;
        if (metric && metric->second < *failing->threshold && !under_floor) {
            const double pct = *failing->threshold / *failing->median * 100.0;
            return sanitize_reason(
                fmt::format("{} {} {} {} < {}% of median {}", k_reason_prefix, failing->check,
                            metric->first, format_significant(metric->second), format_percent(pct),
                            format_significant(*failing->median)),
                suffix);
        }
    }
    // Not a median failure (a floor, a link down, a failed group): the evaluator's own words.
    if (!node.reasons.empty()) {
        return sanitize_reason(node.reasons.front(), suffix);
    }
    if (failing != nullptr) {
        return sanitize_reason(
            failing->check + " " +
                (failing->detail.empty() ? std::string(core::to_string(failing->verdict))
                                         : failing->detail),
            suffix);
    }
    return sanitize_reason(std::string("node ") + std::string(core::to_string(node.verdict)),
                           suffix);
}

void plan_actions(RunReport& report, const core::ActionsConfig& cfg) {
    report.actions.clear();

    std::vector<std::string> targets;
    for (const auto& t : cfg.targets) {
        if (std::find(targets.begin(), targets.end(), t) == targets.end()) {
            targets.push_back(t);
        }
    }

    std::set<std::string> failed;
    for (const auto& node : report.nodes) {
        if (node.verdict != core::Verdict::fail || node.reference) {
            continue;  // a reference node is a partner, never a target
        }
        failed.insert(node.name);
        const std::string reason = reason_for(node, report.run_id);
        const NodeCheck* failing = first_failing_check(node);
        for (const auto& target : targets) {
            Action a;
            a.node = node.name;
            a.reason = reason;
            a.sink = target;
            if (target == "slurm") {
                a.kind = "drain";
                a.argv = slurm_drain_argv(cfg.scontrol, node.name, reason);
            } else if (target == "k8s") {
                a.kind = "taint";
                a.patch = {{"spec",
                            {{"taints",
                              nlohmann::json::array({degraded_taint(
                                  failing != nullptr ? failing->check : std::string_view())})}}}};
            } else {
                // Config validation should have refused this; say so rather than drop the node.
                a.kind = "none";
                a.error = "unknown action target '" + target + "'";
            }
            report.actions.push_back(std::move(a));
        }
    }

    // The breaker exists because a fabric or a baseline problem makes many nodes look bad at once,
    // and draining half a cluster for that is worse than draining nothing.
    Breaker& b = report.breaker;
    b = Breaker{};
    double fraction = cfg.max_action_fraction;
    if (!std::isfinite(fraction) || fraction < 0.0) {
        fraction = 0.0;
    }
    fraction = std::min(fraction, 1.0);
    b.max_action_fraction = fraction;
    b.candidates = static_cast<int>(
        std::count_if(report.nodes.begin(), report.nodes.end(), [](const NodeReport& n) {
            return !n.reference;
        }));
    b.planned = static_cast<int>(failed.size());
    // The epsilon keeps e.g. 0.29 * 100 (28.999999999999996 in binary) from allowing only 28.
    const int by_fraction =
        static_cast<int>(std::floor(fraction * static_cast<double>(b.candidates) + 1e-9));
    b.allowed = std::max(std::max(cfg.min_actions, 0), by_fraction);
    b.tripped = b.planned > b.allowed;
    if (b.tripped) {
        const double pct = b.candidates > 0 ? 100.0 * b.planned / b.candidates : 0.0;
        b.message = fmt::format(
            "circuit breaker: {} of {} nodes ({:.1f} %) failed, more than the allowed {} "
            "(max_action_fraction {:.2f}); no action taken \xE2\x80\x94 check the fabric or raise "
            "actions.max_action_fraction",
            b.planned, b.candidates, pct, b.allowed, fraction);
        for (auto& a : report.actions) {
            a.applied = false;
            if (a.error.empty()) {
                a.error = std::string(k_breaker_error);
            }
        }
    }
}

void force_past_breaker(RunReport& report) {
    Breaker& b = report.breaker;
    if (!b.tripped || b.forced) {
        return;
    }
    b.forced = true;
    b.message += " \xE2\x80\x94 OVERRIDDEN with --force: acting on all " +
                 std::to_string(b.planned) + " nodes";
    for (auto& a : report.actions) {
        if (a.error == k_breaker_error) {
            a.error.clear();
        }
    }
    spdlog::warn("{}", b.message);
}

int exit_code_for(const RunReport& report) {
    if (report.breaker.tripped && !report.breaker.forced) {
        return core::to_int(core::ExitCode::breaker);
    }
    const VerdictTally counts = tally(report);
    if (counts.fail > 0) {
        return core::to_int(core::ExitCode::failed);
    }
    if (counts.error > 0 || counts.inconclusive > 0) {
        return core::to_int(core::ExitCode::inconclusive);
    }
    if (counts.incomplete > 0) {
        return core::to_int(core::ExitCode::incomplete);
    }
    return core::to_int(counts.warn > 0 ? core::ExitCode::warnings : core::ExitCode::ok);
}

}  // namespace preflight::outcome
