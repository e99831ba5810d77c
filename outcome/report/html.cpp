#include "outcome/report/html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "outcome/job_impact.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome {

namespace {

// Geometry of the charts, in SVG user units (= CSS pixels at 100 % zoom).
constexpr double k_chart_width = 960.0;
constexpr double k_label_width = 170.0;
constexpr double k_value_width = 110.0;
constexpr double k_row_height = 20.0;
constexpr double k_bar_height = 14.0;
constexpr double k_axis_height = 34.0;
constexpr double k_histogram_height = 240.0;
constexpr int k_histogram_bins = 40;
constexpr std::size_t k_slowest_shown = 32;  // per-node bars kept when the fleet is aggregated
constexpr std::size_t k_max_reference_lines = 6;

struct Sample {
    std::string node;
    std::optional<double> value;
    core::Verdict verdict = core::Verdict::error;
    std::optional<double> median;
    std::optional<double> threshold;
};

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

std::vector<Sample> samples_for(const RunReport& r, const std::string& check) {
    std::vector<Sample> out;
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (c.check != check) {
                continue;
            }
            Sample s;
            s.node = n.name;
            if (auto it = c.metrics.find("busbw_gbps"); it != c.metrics.end()) {
                s.value = it->second;
            }
            s.verdict = c.verdict;
            s.median = c.median;
            s.threshold = c.threshold;
            out.push_back(std::move(s));
        }
    }
    // Slowest first: the nodes an operator has to look at lead; nodes without a value come last.
    std::stable_sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) {
        if (a.value && b.value) {
            return *a.value < *b.value;
        }
        return a.value.has_value() && !b.value.has_value();
    });
    return out;
}

// Distinct reference values (one per cohort), capped so that many cohorts do not paint the chart.
std::vector<double> distinct(const std::vector<Sample>& samples, bool median) {
    std::set<double> values;
    for (const auto& s : samples) {
        const auto& v = median ? s.median : s.threshold;
        if (v && std::isfinite(*v)) {
            values.insert(*v);
        }
    }
    std::vector<double> out(values.begin(), values.end());
    if (out.size() > k_max_reference_lines) {
        out.resize(k_max_reference_lines);
    }
    return out;
}

// A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about five ticks up to raw_max.
double tick_step(double raw_max) {
    const double raw = raw_max / 5.0;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / p;
    return p * (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 2.5 ? 2.5 : f <= 5.0 ? 5.0 : 10.0);
}

// The axis maximum: a whole number of tick steps just above every value and reference line.
double scale_max(const std::vector<Sample>& samples) {
    double m = 0.0;
    for (const auto& s : samples) {
        for (const auto& v : {s.value, s.median, s.threshold}) {
            if (v && std::isfinite(*v)) {
                m = std::max(m, *v);
            }
        }
    }
    if (!(m > 0.0)) {
        return 1.0;
    }
    const double step = tick_step(m * 1.05);
    return std::ceil(m * 1.05 / step) * step;
}

// Vertical reference lines (medians solid blue, thresholds dashed red) with labels on top.
std::string reference_lines(const std::vector<Sample>& samples, double x0, double plot_w,
                            double xmax, double top, double bottom) {
    std::string out;
    int k = 0;
    for (bool median : {true, false}) {
        for (double v : distinct(samples, median)) {
            const double x = x0 + v / xmax * plot_w;
            const char* color = median ? "#1565c0" : "#c62828";
            out += "<line x1=\"" + num(x) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x) +
                   "\" y2=\"" + num(bottom) + "\" stroke=\"" + color + "\" stroke-width=\"1.5\"" +
                   (median ? "" : " stroke-dasharray=\"5 3\"") + "/>\n";
            out += "<text x=\"" + num(x + 3) + "\" y=\"" + num(top - 4 - 11.0 * (k % 2)) +
                   "\" fill=\"" + color + "\" class=\"ref\">" +
                   (median ? "median " : "threshold ") + fmt(v) + "</text>\n";
            ++k;
        }
    }
    return out;
}

std::string axis(double x0, double plot_w, double xmax, double top, double bottom) {
    std::string out;
    const double step = tick_step(xmax);
    const int ticks = static_cast<int>(std::floor(xmax / step + 1e-9));
    for (int i = 0; i <= ticks; ++i) {
        const double v = step * i;
        const double x = x0 + plot_w * v / xmax;
        out += "<line x1=\"" + num(x) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x) + "\" y2=\"" +
               num(bottom) + "\" class=\"grid\"/>\n";
        out += "<text x=\"" + num(x) + "\" y=\"" + num(bottom + 14) +
               "\" text-anchor=\"middle\" class=\"tick\">" + fmt(v) + "</text>\n";
    }
    out += "<text x=\"" + num(x0 + plot_w) + "\" y=\"" + num(bottom + 28) +
           "\" text-anchor=\"end\" class=\"tick\">busBW GB/s</text>\n";
    return out;
}

// One bar per node, sorted; failed nodes red and marked with a cross.
std::string bar_chart(const std::vector<Sample>& samples, const std::string& title) {
    const double xmax = scale_max(samples);
    const double plot_w = k_chart_width - k_label_width - k_value_width;
    const double top = 30.0;
    const double bottom = top + k_row_height * static_cast<double>(samples.size());
    const double height = bottom + k_axis_height;
    std::string out = "<svg class=\"chart\" role=\"img\" width=\"" + num(k_chart_width) +
                      "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(k_chart_width) +
                      " " + num(height) + "\"><title>" + esc(title) + "</title>\n";
    out += axis(k_label_width, plot_w, xmax, top, bottom);
    double y = top;
    for (const auto& s : samples) {
        const double mid = y + k_row_height / 2.0;
        out += "<text x=\"" + num(k_label_width - 6) + "\" y=\"" + num(mid + 4) +
               "\" text-anchor=\"end\" class=\"label\">" + esc(s.node) + "</text>\n";
        if (s.value) {
            const double w = std::max(1.0, *s.value / xmax * plot_w);
            out += "<rect x=\"" + num(k_label_width) + "\" y=\"" + num(mid - k_bar_height / 2.0) +
                   "\" width=\"" + num(w) + "\" height=\"" + num(k_bar_height) + "\" fill=\"" +
                   verdict_color(s.verdict) + "\"><title>" + esc(s.node) + ": " + fmt(*s.value) +
                   " GB/s (" + std::string(core::to_string(s.verdict)) + ")</title></rect>\n";
            std::string text = fmt(*s.value);
            if (s.median && *s.median > 0.0) {
                text += " (" + format_significant(*s.value / *s.median * 100.0, 3) + "%)";
            }
            if (s.verdict == core::Verdict::fail) {
                text = "\u2717 " + text;
            }
            out += "<text x=\"" + num(k_label_width + w + 4) + "\" y=\"" + num(mid + 4) +
                   "\" class=\"val" + (s.verdict == core::Verdict::fail ? " bad" : "") + "\">" +
                   esc(text) + "</text>\n";
        } else {
            out += "<text x=\"" + num(k_label_width + 4) + "\" y=\"" + num(mid + 4) +
                   "\" class=\"val muted\">no value (" + std::string(core::to_string(s.verdict)) +
                   ")</text>\n";
        }
        y += k_row_height;
    }
    out += reference_lines(samples, k_label_width, plot_w, xmax, top, bottom);
    out += "</svg>\n";
    return out;
}

// Many nodes: a histogram stacked by verdict, with the same reference lines.
std::string histogram(const std::vector<Sample>& samples, const std::string& title) {
    const double xmax = scale_max(samples);
    const double x0 = 60.0;
    const double plot_w = k_chart_width - x0 - 40.0;
    const double top = 34.0;
    const double bottom = top + k_histogram_height;
    const double height = bottom + k_axis_height;
    // counts[bin][verdict]
    std::vector<std::map<core::Verdict, int>> counts(k_histogram_bins);
    for (const auto& s : samples) {
        if (!s.value) {
            continue;
        }
        auto bin = static_cast<int>(*s.value / xmax * k_histogram_bins);
        bin = std::clamp(bin, 0, k_histogram_bins - 1);
        ++counts[static_cast<std::size_t>(bin)][s.verdict];
    }
    int ymax = 1;
    for (const auto& c : counts) {
        int total = 0;
        for (const auto& [v, n] : c) {
            total += n;
        }
        ymax = std::max(ymax, total);
    }
    std::string out = "<svg class=\"chart\" role=\"img\" width=\"" + num(k_chart_width) +
                      "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(k_chart_width) +
                      " " + num(height) + "\"><title>" + esc(title) + "</title>\n";
    out += axis(x0, plot_w, xmax, top, bottom);
    // Log scale: a healthy fleet piles up in one or two bins and the few slow nodes, the point of
    // the chart, would otherwise be a pixel high.
    const double log_max = std::log1p(static_cast<double>(ymax));
    auto bar_height = [&](int n) {
        return k_histogram_height * std::log1p(static_cast<double>(n)) / log_max;
    };
    for (int tick = 1; tick <= ymax; tick *= 10) {
        const double y = bottom - bar_height(tick);
        out += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x0 + plot_w) +
               "\" y2=\"" + num(y) + "\" class=\"grid\"/>\n";
        out += "<text x=\"" + num(x0 - 6) + "\" y=\"" + num(y + 4) +
               "\" text-anchor=\"end\" class=\"tick\">" + std::to_string(tick) + "</text>\n";
    }
    out += "<text x=\"4\" y=\"" + num(top - 14) + "\" class=\"tick\">nodes (log scale)</text>\n";
    const double bin_w = plot_w / k_histogram_bins;
    for (int b = 0; b < k_histogram_bins; ++b) {
        double y = bottom;
        int below = 0;  // nodes stacked under this segment
        const double lo = xmax * b / k_histogram_bins;
        const double hi = xmax * (b + 1) / k_histogram_bins;
        for (auto v : {core::Verdict::pass, core::Verdict::warn, core::Verdict::skip,
                       core::Verdict::error, core::Verdict::fail}) {
            auto it = counts[static_cast<std::size_t>(b)].find(v);
            if (it == counts[static_cast<std::size_t>(b)].end()) {
                continue;
            }
            // Stacked on a log axis: each segment spans log(below + n) - log(below).
            const double h = bar_height(below + it->second) - bar_height(below);
            below += it->second;
            y -= h;
            out += "<rect x=\"" + num(x0 + bin_w * b + 0.5) + "\" y=\"" + num(y) + "\" width=\"" +
                   num(bin_w - 1.0) + "\" height=\"" + num(h) + "\" fill=\"" + verdict_color(v) +
                   "\"><title>" + std::to_string(it->second) + " " +
                   std::string(core::to_string(v)) + " nodes in " + fmt(lo) + "-" + fmt(hi) +
                   " GB/s</title></rect>\n";
        }
    }
    out += reference_lines(samples, x0, plot_w, xmax, top, bottom);
    out += "</svg>\n";
    return out;
}

double percentile(const std::vector<double>& sorted, double p) {
    // Linear interpolation between closest ranks (the numpy default).
    if (sorted.empty()) {
        return 0.0;
    }
    const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::string percentile_table(const std::vector<Sample>& samples) {
    std::vector<double> values;
    for (const auto& s : samples) {
        if (s.value) {
            values.push_back(*s.value);
        }
    }
    std::sort(values.begin(), values.end());
    std::string out = "<table class=\"pct\"><tr><th>nodes measured</th>";
    const double ps[] = {0, 1, 5, 25, 50, 75, 95, 99, 100};
    for (double p : ps) {
        out += "<th>" +
               (p == 0     ? std::string("min")
                : p == 100 ? std::string("max")
                           : "p" + std::to_string(static_cast<int>(p))) +
               "</th>";
    }
    out += "</tr><tr><td>" + std::to_string(values.size()) + " of " +
           std::to_string(samples.size()) + "</td>";
    for (double p : ps) {
        out += "<td>" + (values.empty() ? std::string("-") : fmt(percentile(values, p))) + "</td>";
    }
    out += "</tr></table>\n";
    return out;
}

std::string check_section(const RunReport& r, const std::string& check) {
    auto samples = samples_for(r, check);
    std::string out = "<section><h2>" + esc(check) + ": busBW per node</h2>\n";
    int failed = 0;
    for (const auto& s : samples) {
        failed += s.verdict == core::Verdict::fail ? 1 : 0;
    }
    out += "<p>" + std::to_string(samples.size()) + " nodes, " + std::to_string(failed) +
           " failed. Sorted slowest first; blue line: cohort median, dashed red: threshold; red "
           "bars (\u2717) failed.</p>\n";
    if (samples.size() <= k_html_label_limit) {
        out += bar_chart(samples, check + " busBW per node");
    } else {
        out += histogram(samples, check + " busBW histogram");
        out += percentile_table(samples);
        std::vector<Sample> slowest(
            samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(
                                                   std::min(k_slowest_shown, samples.size())));
        out += "<h3>Slowest " + std::to_string(slowest.size()) + " of " +
               std::to_string(samples.size()) + " nodes</h3>\n";
        out += bar_chart(slowest, check + " slowest nodes");
    }
    out += "</section>\n";
    return out;
}

std::string cell_color(const GroupRecord& g, double median, double threshold_fraction) {
    if (!g.busbw_gbps) {
        return verdict_color(core::Verdict::error);
    }
    if (g.slow) {
        return verdict_color(core::Verdict::fail);
    }
    if (median > 0.0 && *g.busbw_gbps < median * threshold_fraction) {
        return verdict_color(core::Verdict::warn);
    }
    return verdict_color(core::Verdict::pass);
}

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
    std::vector<double> values;
    for (const auto* g : groups) {
        if (g->busbw_gbps) {
            values.push_back(*g->busbw_gbps);
        }
    }
    std::sort(values.begin(), values.end());
    const double median = percentile(values, 50);
    const double threshold_fraction =
        r.config.is_object() ? r.config.value("threshold_fraction", 0.9) : 0.9;
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
        out += "<p>Cell colour: the latest group holding both nodes (green: at or above " +
               format_significant(threshold_fraction * 100, 2) +
               "% of the median group, orange: under that but not flagged slow, red: slow, "
               "purple: no value). Hover for the round and busBW.</p>\n";
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
                    fill = cell_color(g, median, threshold_fraction);
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
                auto it = c.metrics.find("busbw_gbps");
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
    int counts[5] = {0, 0, 0, 0, 0};
    for (const auto& n : r.nodes) {
        ++counts[static_cast<int>(n.verdict)];
    }
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    out += "<title>preflight " + esc(r.run_id) + "</title>\n";
    out += k_style;
    out += "</head><body>\n";
    out += "<h1>preflight run " + esc(r.run_id) + "</h1>\n";
    out += "<p>";
    for (auto v : {core::Verdict::pass, core::Verdict::warn, core::Verdict::fail,
                   core::Verdict::skip, core::Verdict::error}) {
        out += badge(v) + " " + std::to_string(counts[static_cast<int>(v)]) + " &nbsp; ";
    }
    out += "of " + std::to_string(r.nodes.size()) + " nodes &nbsp; exit code " +
           std::to_string(r.exit_code) + "</p>\n";
    if (r.interrupted) {
        out +=
            "<p class=\"banner bad\">Interrupted: verdicts are partial and no action was "
            "planned.</p>\n";
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
