// The pieces the HTML report is assembled from (html.cpp): shared formatting helpers and chart
// geometry, the busBW charts (html_charts.cpp), the group matrix (html_matrix.cpp) and the node,
// action and job-impact tables (html_tables.cpp). Internal to outcome/report.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome::html_parts {

// Geometry of the charts, in SVG user units (= CSS pixels at 100 % zoom).
inline constexpr double k_chart_width = 960.0;
inline constexpr double k_label_width = 170.0;
inline constexpr double k_value_width = 110.0;
inline constexpr double k_row_height = 20.0;
inline constexpr double k_bar_height = 14.0;
inline constexpr double k_axis_height = 34.0;
inline constexpr double k_histogram_height = 240.0;
inline constexpr int k_histogram_bins = 40;
inline constexpr std::size_t k_slowest_shown =
    32;  // per-node bars kept when the fleet is aggregated
inline constexpr std::size_t k_max_reference_lines = 6;

// One decimal, for SVG coordinates.
std::string num(double v);
// Three significant digits, for values shown to people.
std::string fmt(double v);
std::string esc(std::string_view s);
const char* verdict_color(core::Verdict v);
std::string badge(core::Verdict v);
// The p-th percentile (0..100) of sorted values, interpolated; 0 when empty.
double percentile(const std::vector<double>& sorted, double p);

// Per collective check: busBW bar chart (or histogram and percentiles above k_html_label_limit).
std::string check_section(const RunReport& r, const std::string& check);
// Per collective check: who was grouped with whom in the inter-node rounds, and how fast.
std::string group_matrix(const RunReport& r, const std::string& check);
// The verdict table: one row per node (non-pass only above k_html_label_limit).
std::string node_table(const RunReport& r, const std::vector<std::string>& checks);
std::string actions_section(const RunReport& r);
// Empty unless the config names a job profile.
std::string impact_section(const RunReport& r);

}  // namespace preflight::outcome::html_parts
