// The HTML report document: header, verdict badges and run metadata around the sections built in
// html_charts.cpp, html_matrix.cpp and html_tables.cpp.
#include "outcome/report/html.hpp"

#include <cstdio>

#include "outcome/budget_notices.hpp"
#include "outcome/job_impact.hpp"
#include "outcome/report/html_parts.hpp"
#include "outcome/report/terminal.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace html_parts {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string fmt(double v) {
    return format_significant(v, 3);
}

std::string esc(std::string_view s) {
    return html_escape(s);
}

const char* verdict_color(core::Verdict v) {
    switch (v) {
        case core::Verdict::pass:
            return "#2e7d32";
        case core::Verdict::warn:
            return "#ef8f00";
        case core::Verdict::fail:
            return "#c62828";
        case core::Verdict::skip:
            return "#9e9e9e";
        case core::Verdict::error:
            return "#6a1b9a";
    }
    return "#000";
}

std::string badge(core::Verdict v) {
    return std::string("<span class=\"v v-") + std::string(core::to_string(v)) + "\">" +
           std::string(core::to_string(v)) + "</span>";
}

}  // namespace html_parts

namespace {

const char* k_style = R"(<style>
body{font:14px/1.4 "DejaVu Sans",Arial,sans-serif;margin:24px;color:#212121;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:24px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px}table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;white-space:nowrap}
.v{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-weight:bold;font-size:12px}
.v-pass{background:#2e7d32}.v-warn{background:#ef8f00}.v-fail{background:#c62828}
.v-skip{background:#9e9e9e}.v-error{background:#6a1b9a}
.banner{padding:6px 10px;border-radius:4px}.banner.bad{background:#ffebee;color:#b71c1c}
tr.bad td{background:#fff3f3}.muted{color:#757575}code{font-size:12px}
svg.chart{display:block;margin:8px 0}svg text{font-family:"DejaVu Sans",Arial,sans-serif}
svg .label{font-size:11px;fill:#212121}svg .val{font-size:11px;fill:#424242}
svg .val.bad{fill:#c62828;font-weight:bold}svg .val.muted{fill:#9e9e9e}
svg .tick{font-size:10px;fill:#616161}svg .ref{font-size:10px}svg .grid{stroke:#eee}
</style>
)";

}  // namespace

std::string html_escape(std::string_view text) {
    const std::string clean = sanitize_text(text);
    std::string out;
    out.reserve(clean.size());
    for (char c : clean) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string render_html(const RunReport& r) {
    using namespace html_parts;
    const VerdictTally counts = tally(r);
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    out += "<title>preflight " + esc(r.run_id) + "</title>\n";
    out += k_style;
    out += "</head><body>\n";
    out += "<h1>preflight run " + esc(r.run_id) + "</h1>\n";
    out += "<p>";
    for (auto v : {core::Verdict::pass, core::Verdict::warn, core::Verdict::fail,
                   core::Verdict::skip, core::Verdict::error}) {
        out += badge(v) + " " + std::to_string(counts.of(v)) + " &nbsp; ";
    }
    out += "of " + std::to_string(r.nodes.size()) + " nodes &nbsp; exit code " +
           std::to_string(r.exit_code) + "</p>\n";
    if (r.interrupted) {
        out +=
            "<p class=\"banner bad\">Interrupted: verdicts are partial and no action was "
            "planned.</p>\n";
    }
    for (const auto& notice : undecided_notices(r)) {
        out += "<p class=\"banner bad\">" + esc(notice) + "</p>\n";
    }
    if (const auto budget = budget_notices(r); !budget.empty()) {
        out += "<pre class=\"muted\">";
        for (const auto& line : budget) {
            out += esc(line) + "\n";
        }
        out += "</pre>\n";
    }
    out += "<p class=\"muted\">" + esc(r.started_at) + " \u2192 " + esc(r.finished_at) + " (" +
           fmt(r.wall_seconds) + " s), launcher " + esc(r.launcher) + ", " +
           (r.apply ? "actions applied (--apply)" : "dry run") + "</p>\n";
    out += impact_section(r);
    const auto checks = busbw_checks(r);
    for (const auto& c : checks) {
        out += check_section(r, c);
    }
    for (const auto& c : checks) {
        out += group_matrix(r, c);
    }
    out += node_table(r, checks);
    out += actions_section(r);
    out += "<section><h2>Run metadata</h2>\n";
    out += "<table class=\"meta\">";
    auto row = [&out](const std::string& k, const std::string& v) {
        out += "<tr><th>" + k + "</th><td>" + v + "</td></tr>";
    };
    row("started", esc(r.started_at));
    row("finished", esc(r.finished_at));
    row("wall time", fmt(r.wall_seconds) + " s");
    row("launcher", esc(r.launcher));
    row("apply", r.apply ? "yes" : "no (dry run)");
    if (!r.preflight_version.empty()) {  // reports saved before 0.2.0 do not say
        row("preflight", esc(r.preflight_version + " (commit " + r.preflight_commit + ")"));
    }
    row("schema version", std::to_string(r.schema_version));
    if (r.config.is_object()) {
        for (const char* key : {"checks", "threshold_fraction", "min_cohort", "cohort_label",
                                "max_action_fraction", "action_targets", "source"}) {
            if (auto it = r.config.find(key); it != r.config.end()) {
                row(std::string("config ") + key,
                    esc(it->is_string()
                            ? it->get<std::string>()
                            : it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
            }
        }
    }
    out += "</table>\n";
    if (!r.rounds.empty()) {
        out += "<table><tr><th>round</th><th>purpose</th><th>steps</th><th>seconds</th></tr>";
        for (const auto& s : r.rounds) {
            out += "<tr><td>" + std::to_string(s.round) + "</td><td>" + esc(s.purpose) +
                   "</td><td>" + std::to_string(s.steps) + "</td><td>" + fmt(s.seconds) +
                   "</td></tr>";
        }
        out += "</table>\n";
    }
    out += "</section>\n";
    out += "<p class=\"muted\">Generated by preflight from report.json (schema " +
           std::to_string(r.schema_version) + ").</p>\n</body></html>\n";
    return out;
}

}  // namespace preflight::outcome
