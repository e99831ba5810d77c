#include "outcome/report/markdown.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "outcome/budget_notices.hpp"
#include "outcome/job_impact.hpp"
#include "outcome/report/terminal.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace {

std::string fmt(double v) {
    return format_significant(v, 3);
}

// "lo-hi", one figure when they agree, "-" for none.
std::string range(const std::vector<double>& v) {
    if (v.empty()) {
        return "-";
    }
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *lo == *hi ? fmt(*lo) : fmt(*lo) + "-" + fmt(*hi);
}

// One check's row of the busBW table: how many nodes measured it, the lowest, the range of the
// medians, the highest, the range of the thresholds and how many failed.
std::string busbw_row(const RunReport& r, const std::string& name) {
    std::vector<double> values;
    std::vector<double> medians;
    std::vector<double> thresholds;
    int failed = 0;
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (c.check != name) {
                continue;
            }
            if (auto it = c.metrics.find("busbw_gbps"); it != c.metrics.end()) {
                values.push_back(it->second);
            }
            if (c.median) {
                medians.push_back(*c.median);
            }
            if (c.threshold) {
                thresholds.push_back(*c.threshold);
            }
            failed += c.verdict == core::Verdict::fail ? 1 : 0;
        }
    }
    std::sort(values.begin(), values.end());
    return "| " + markdown_escape(name) + " | " + std::to_string(values.size()) + " | " +
           (values.empty() ? "-" : fmt(values.front())) + " | " + range(medians) + " | " +
           (values.empty() ? "-" : fmt(values.back())) + " | " + range(thresholds) + " | " +
           std::to_string(failed) + " |\n";
}

// The heading, the tally and the notices that qualify it.
void render_summary(std::string& out, const RunReport& r) {
    const VerdictTally counts = tally(r);
    out += "## preflight run " + markdown_escape(r.run_id) + "\n\n";
    out += "**" + std::to_string(r.nodes.size()) + " nodes**: " + std::to_string(counts.pass) +
           " pass, " + std::to_string(counts.warn) + " warn, " + std::to_string(counts.fail) +
           " fail, " + std::to_string(counts.skip) + " skip, " + std::to_string(counts.error) +
           " error; exit code " + std::to_string(r.exit_code) + ". " +
           markdown_escape(r.started_at) + " to " + markdown_escape(r.finished_at) + " (" +
           fmt(r.wall_seconds) + " s, launcher " + markdown_escape(r.launcher) + ").\n\n";
    if (r.interrupted) {
        out += "> **Interrupted**: verdicts are partial and no action was planned.\n\n";
    }
    for (const auto& notice : undecided_notices(r)) {
        out += "> " + markdown_escape(notice) + "\n\n";
    }
    for (const auto& line : budget_notices(r)) {
        out += "> " + markdown_escape(line) + "\n\n";
    }
}

// The nodes that did not pass, worst first, with their reasons (k_markdown_max_rows at most).
void render_non_pass_nodes(std::string& out, const RunReport& r) {
    std::vector<const NodeReport*> bad;
    for (const auto& n : r.nodes) {
        if (n.verdict != core::Verdict::pass) {
            bad.push_back(&n);
        }
    }
    std::stable_sort(bad.begin(), bad.end(), [](const NodeReport* a, const NodeReport* b) {
        return core::severity(a->verdict) > core::severity(b->verdict);
    });
    if (bad.empty()) {
        out += "All nodes passed.\n\n";
        return;
    }
    out += "| node | verdict | reasons |\n|---|---|---|\n";
    for (std::size_t i = 0; i < bad.size() && i < k_markdown_max_rows; ++i) {
        std::string reasons;
        for (const auto& reason : bad[i]->reasons) {
            reasons += (reasons.empty() ? "" : "<br>") + markdown_escape(reason);
        }
        out += "| " + markdown_escape(bad[i]->name) + " | **" +
               std::string(core::to_string(bad[i]->verdict)) + "** | " + reasons + " |\n";
    }
    if (bad.size() > k_markdown_max_rows) {
        out += "\n" + std::to_string(bad.size() - k_markdown_max_rows) +
               " more non-pass nodes in report.json.\n";
    }
    out += "\n";
}

// The planned or applied actions (k_markdown_max_rows at most).
void render_actions(std::string& out, const RunReport& r) {
    if (r.actions.empty()) {
        return;
    }
    out += std::string("Actions (") + (r.apply ? "applied with --apply" : "planned, dry run") +
           "):\n\n";
    std::size_t shown = 0;
    for (const auto& a : r.actions) {
        if (++shown > k_markdown_max_rows) {
            out += "- " + std::to_string(r.actions.size() - k_markdown_max_rows) +
                   " more in report.json\n";
            break;
        }
        out += "- " + markdown_escape(a.node) + ": " + markdown_escape(a.kind) + " via " +
               markdown_escape(a.sink) + " - " +
               (a.applied         ? std::string("applied")
                : a.error.empty() ? std::string("planned")
                                  : "not applied: " + markdown_escape(a.error)) +
               "\n";
    }
    out += "\n";
}

}  // namespace

std::string markdown_escape(std::string_view text) {
    std::string out;
    for (char c : sanitize_text(text)) {
        // Backslash escapes are what CommonMark and GFM tables honour; '<' and '>' become
        // entities because a backslash does not stop every renderer from reading raw HTML.
        if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else {
            if (c == '|' || c == '\\' || c == '`' || c == '*' || c == '_' || c == '[' || c == ']' ||
                c == '#') {
                out += '\\';
            }
            out += c;
        }
    }
    return out;
}

std::string render_markdown(const RunReport& r) {
    std::string out;
    render_summary(out, r);
    if (const auto checks = busbw_checks(r); !checks.empty()) {
        out += "| check | measured | min | median | max | threshold | failed |\n";
        out += "|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& name : checks) {
            out += busbw_row(r, name);
        }
        out += "\nbusBW in GB/s (nccl-tests definition).\n\n";
    }
    render_non_pass_nodes(out, r);
    if (r.breaker.tripped) {
        out += "**Circuit breaker tripped**: " + markdown_escape(r.breaker.message) + "\n\n";
    }
    render_actions(out, r);
    if (auto job = job_profile_from_config(r.config)) {
        out += "### Job impact\n\n";
        if (auto impact = estimate_fleet(*job, r)) {
            out += "```\n" + render_fleet_impact(*job, *impact) + "```\n\n";
        } else {
            out += "Not estimated: " + markdown_escape(impact.error().message) + "\n\n";
        }
    }
    return out;
}

}  // namespace preflight::outcome
