// The group matrix of the HTML report: for each collective check, which nodes were grouped in the
// inter-node rounds and how fast each group ran (an SVG matrix up to k_html_label_limit nodes,
// a table of slow and failed groups above it).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "outcome/report/html.hpp"
#include "outcome/report/html_parts.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome::html_parts {

namespace {

// The judge's threshold for each node on this check, as the evaluation recorded it: the matrix
// colours groups against it and never derives one of its own.
std::map<std::string, double> judged_thresholds(const RunReport& r, const std::string& check) {
    std::map<std::string, double> out;
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (c.check == check && c.threshold) {
                out[n.name] = *c.threshold;
            }
        }
    }
    return out;
}

std::string cell_color(const GroupRecord& g, const std::map<std::string, double>& threshold_of) {
    if (!g.busbw_gbps) {
        return verdict_color(core::Verdict::error);
    }
    if (g.slow) {
        return verdict_color(core::Verdict::fail);
    }
    auto t = threshold_of.find(g.members.front());
    if (t != threshold_of.end() && *g.busbw_gbps < t->second) {
        return verdict_color(core::Verdict::warn);
    }
    return verdict_color(core::Verdict::pass);
}

}  // namespace

std::string group_matrix(const RunReport& r, const std::string& check) {
    std::vector<const GroupRecord*> groups;
    for (const auto& g : r.groups) {
        if (g.check == check && g.round > 0) {
            groups.push_back(&g);
        }
    }
    if (groups.empty()) {
        return "";
    }
    std::string out = "<section><h2>" + esc(check) + ": groups by round</h2>\n";
    const auto threshold_of = judged_thresholds(r, check);
    std::map<std::string, std::size_t> index;
    std::vector<std::string> names;
    for (const auto& n : r.nodes) {
        if (index.emplace(n.name, names.size()).second) {
            names.push_back(n.name);
        }
    }
    if (names.size() <= k_html_label_limit) {
        // The matrix: cell (a, b) is the latest group that held both a and b.
        std::map<std::pair<std::size_t, std::size_t>, const GroupRecord*> cells;
        for (const auto* g : groups) {
            for (const auto& a : g->members) {
                for (const auto& b : g->members) {
                    auto ia = index.find(a), ib = index.find(b);
                    if (a != b && ia != index.end() && ib != index.end()) {
                        cells[{ia->second, ib->second}] = g;
                    }
                }
            }
        }
        const double n = static_cast<double>(names.size());
        const double cell = std::clamp(560.0 / n, 9.0, 28.0);
        const double x0 = k_label_width;
        std::size_t longest = 1;
        for (const auto& name : names) {
            longest = std::max(longest, display_width(name));
        }
        // Room for the column labels, rotated 60 degrees: about 6 px per character at 11 px.
        const double y0 = std::min(140.0, 16.0 + 6.0 * static_cast<double>(longest) * 0.87);
        const double size = x0 + cell * n + 20.0;
        const double height = y0 + cell * n + 20.0;
        out +=
            "<p>Cell colour: the latest group holding both nodes (green: at or above the "
            "judged threshold of its first node's cohort, orange: under it but not flagged "
            "slow, red: slow, purple: no value). Hover for the round and busBW.</p>\n";
        out += "<svg class=\"chart\" role=\"img\" width=\"" + num(size) + "\" height=\"" +
               num(height) + "\" viewBox=\"0 0 " + num(size) + " " + num(height) +
               "\"><title>group matrix</title>\n";
        for (std::size_t i = 0; i < names.size(); ++i) {
            const double p = static_cast<double>(i) * cell + cell / 2.0;
            out += "<text x=\"" + num(x0 - 4) + "\" y=\"" + num(y0 + p + 4) +
                   "\" text-anchor=\"end\" class=\"label\">" + esc(names[i]) + "</text>\n";
            out += "<text transform=\"translate(" + num(x0 + p + 4) + "," + num(y0 - 4) +
                   ") rotate(-60)\" class=\"label\">" + esc(names[i]) + "</text>\n";
            for (std::size_t k = 0; k < names.size(); ++k) {
                const double x = x0 + static_cast<double>(k) * cell;
                const double y = y0 + static_cast<double>(i) * cell;
                auto it = cells.find({i, k});
                std::string fill = i == k ? "#e0e0e0" : "#f5f5f5";
                std::string tip;
                if (it != cells.end()) {
                    const auto& g = *it->second;
                    fill = cell_color(g, threshold_of);
                    tip = "<title>" + esc(names[i]) + " \u00d7 " + esc(names[k]) + ": round " +
                          std::to_string(g.round) + " " + esc(g.id) + " " +
                          (g.busbw_gbps ? fmt(*g.busbw_gbps) + " GB/s" : esc(g.error)) +
                          (g.slow ? " (slow)" : "") + "</title>";
                }
                out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(cell - 1) +
                       "\" height=\"" + num(cell - 1) + "\" fill=\"" + fill + "\">" + tip +
                       "</rect>\n";
            }
        }
        out += "</svg>\n";
    }
    // The table: every group for small fleets, only slow or failed ones for large.
    const bool all = names.size() <= k_html_label_limit;
    out +=
        "<table><tr><th>round</th><th>group</th><th>members</th><th>busBW GB/s</th>"
        "<th>seconds</th><th>note</th></tr>\n";
    std::size_t rows = 0, hidden = 0;
    for (const auto* g : groups) {
        if (!all && !g->slow && g->busbw_gbps) {
            continue;
        }
        if (rows >= k_html_max_rows) {
            ++hidden;
            continue;
        }
        ++rows;
        std::string members;
        for (const auto& m : g->members) {
            members += (members.empty() ? "" : ", ") + m;
        }
        out += std::string("<tr") + (g->slow || !g->busbw_gbps ? " class=\"bad\"" : "") + "><td>" +
               std::to_string(g->round) + "</td><td>" + esc(g->id) + "</td><td>" + esc(members) +
               "</td><td>" + (g->busbw_gbps ? fmt(*g->busbw_gbps) : "-") + "</td><td>" +
               fmt(g->seconds) + "</td><td>" + (g->slow ? "slow " : "") + esc(g->error) +
               "</td></tr>\n";
    }
    out += "</table>\n";
    if (!all) {
        out += "<p>" + std::to_string(groups.size()) +
               " groups in all; only slow groups and groups without a value are listed";
        out += hidden > 0 ? " (" + std::to_string(hidden) + " more in report.json)" : "";
        out += ".</p>\n";
    }
    out += "</section>\n";
    return out;
}

}  // namespace preflight::outcome::html_parts
