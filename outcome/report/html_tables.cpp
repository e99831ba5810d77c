// The tables of the HTML report: verdicts per node and check with reasons, the planned or applied
// actions with the circuit breaker, and the job-impact estimate.
#include <algorithm>
#include <map>
#include <vector>

#include "core/check_spec.hpp"
#include "outcome/job_impact.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/html_parts.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome::html_parts {

std::string node_table(const RunReport& r, const std::vector<std::string>& checks) {
    std::vector<const NodeReport*> nodes;
    for (const auto& n : r.nodes) {
        nodes.push_back(&n);
    }
    std::stable_sort(nodes.begin(), nodes.end(), [](const NodeReport* a, const NodeReport* b) {
        return core::severity(a->verdict) > core::severity(b->verdict);
    });
    std::map<std::string, std::vector<const Action*>> actions;
    for (const auto& a : r.actions) {
        actions[a.node].push_back(&a);
    }
    const bool all = nodes.size() <= k_html_label_limit;
    std::string out = "<section><h2>Verdicts</h2>\n";
    if (!all) {
        out += "<p>" + std::to_string(nodes.size()) +
               " nodes; only nodes that did not pass are listed.</p>\n";
    }
    out += "<table><tr><th>node</th><th>verdict</th>";
    for (const auto& c : checks) {
        out += "<th>" + esc(c) + "</th>";
    }
    out += "<th>link findings</th><th>reasons</th><th>actions</th></tr>\n";
    std::size_t rows = 0, hidden = 0;
    for (const auto* n : nodes) {
        if (!all && n->verdict == core::Verdict::pass) {
            continue;
        }
        if (rows >= k_html_max_rows) {
            ++hidden;
            continue;
        }
        ++rows;
        out += "<tr><td>" + esc(n->name) + "</td><td>" + badge(n->verdict) + "</td>";
        for (const auto& name : checks) {
            std::string cell = "-";
            for (const auto& c : n->checks) {
                if (c.check != name) {
                    continue;
                }
                auto it = c.metrics.find(std::string(core::k_busbw_metric));
                cell = it == c.metrics.end() ? std::string(core::to_string(c.verdict))
                                             : fmt(it->second);
                if (it != c.metrics.end() && c.fraction_of_median) {
                    cell += " (" + format_significant(*c.fraction_of_median * 100.0, 3) + "%)";
                }
            }
            out += "<td class=\"num\">" + esc(cell) + "</td>";
        }
        std::string links;
        for (const auto& c : n->checks) {
            if (c.check.rfind("link.", 0) == 0 && !c.detail.empty()) {
                links += "<div>" + badge(c.verdict) + " " + esc(c.detail) + "</div>";
            }
        }
        std::string reasons;
        for (const auto& reason : n->reasons) {
            reasons += "<div>" + esc(reason) + "</div>";
        }
        std::string acts;
        for (const auto* a : actions[n->name]) {
            acts += "<div>" + esc(a->kind) + " (" + esc(a->sink) + "): " +
                    (a->applied         ? "applied"
                     : a->error.empty() ? "planned"
                                        : esc(a->error)) +
                    "</div>";
        }
        out += "<td>" + links + "</td><td>" + reasons + "</td><td>" + acts + "</td></tr>\n";
    }
    out += "</table>\n";
    if (hidden > 0) {
        out += "<p>" + std::to_string(hidden) + " more nodes in report.json.</p>\n";
    }
    out += "</section>\n";
    return out;
}

std::string actions_section(const RunReport& r) {
    std::string out = "<section><h2>Actions</h2>\n";
    if (r.breaker.tripped) {
        out +=
            "<p class=\"banner bad\">Circuit breaker tripped: " + esc(r.breaker.message) + "</p>\n";
    }
    out += "<p>" + std::string(r.apply ? "Applied (--apply)" : "Planned only (dry run)") + "; " +
           std::to_string(r.breaker.planned) + " nodes planned, " +
           std::to_string(r.breaker.allowed) + " allowed by the breaker.</p>\n";
    if (r.actions.empty()) {
        out += "<p>No actions.</p>\n</section>\n";
        return out;
    }
    out +=
        "<table><tr><th>node</th><th>kind</th><th>sink</th><th>state</th><th>command / "
        "patch</th></tr>\n";
    std::size_t rows = 0;
    for (const auto& a : r.actions) {
        if (++rows > k_html_max_rows) {
            out += "<tr><td colspan=\"5\">" + std::to_string(r.actions.size() - k_html_max_rows) +
                   " more in report.json</td></tr>\n";
            break;
        }
        std::string what;
        if (!a.argv.empty()) {
            for (const auto& arg : a.argv) {
                what += (what.empty() ? "" : " ") + arg;
            }
        } else if (!a.patch.is_null()) {
            what = a.patch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
        out += "<tr><td>" + esc(a.node) + "</td><td>" + esc(a.kind) + "</td><td>" + esc(a.sink) +
               "</td><td>" +
               (a.applied         ? std::string("applied")
                : a.error.empty() ? std::string("planned")
                                  : "not applied: " + esc(a.error)) +
               "</td><td><code>" + esc(what) + "</code></td></tr>\n";
    }
    out += "</table>\n</section>\n";
    return out;
}

std::string impact_section(const RunReport& r) {
    auto job = job_profile_from_config(r.config);
    if (!job) {
        return "";
    }
    auto impact = estimate_fleet(*job, r);
    std::string out = "<section><h2>Job impact</h2>\n";
    if (!impact) {
        out += "<p>Not estimated: " + esc(impact.error().message) + "</p>\n</section>\n";
        return out;
    }
    out += "<pre>" + esc(render_fleet_impact(*job, *impact)) + "</pre>\n";
    out +=
        "<p class=\"muted\">Ring all-reduce time = gradient bytes \u00d7 2(n\u22121)/n \u00f7 "
        "busBW (nccl-tests doc/PERFORMANCE.md); step = compute + all-reduce (no overlap); "
        "the slowest node sets the pace.</p>\n</section>\n";
    return out;
}

}  // namespace preflight::outcome::html_parts
