// The busBW charts of the HTML report: a sorted bar per node with the cohort median and threshold
// lines, or, above k_html_label_limit nodes, a histogram stacked by verdict with percentiles and
// the slowest nodes' bars. Inline SVG, no scripts.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/check_spec.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/html_parts.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome::html_parts {

namespace {

struct Sample {
    std::string node;
    std::optional<double> value;
    core::Verdict verdict = core::Verdict::error;
    std::optional<double> median;
    std::optional<double> threshold;
};

std::vector<Sample> samples_for(const RunReport& r, const std::string& check) {
    std::vector<Sample> out;
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (c.check != check) {
                continue;
            }
            Sample s;
            s.node = n.name;
            if (auto it = c.metrics.find(std::string(core::k_busbw_metric));
                it != c.metrics.end()) {
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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace preflight::outcome::html_parts
