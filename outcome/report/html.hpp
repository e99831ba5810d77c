// The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external fetches)
// with run metadata, per collective check a sorted busBW bar chart with the median and threshold
// lines, the group matrix of the inter-node rounds, the verdict table (reasons, link findings,
// actions) and, when the config names a job profile, the job-impact estimate. Above
// k_html_label_limit nodes charts aggregate (histogram, percentiles) and tables list only non-pass
// nodes. Every string from the report is escaped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

// Above this many nodes nothing is drawn per node.
inline constexpr std::size_t k_html_label_limit = 64;
// Table rows are capped here; the rest is counted and left to report.json.
inline constexpr std::size_t k_html_max_rows = 500;

std::string render_html(const RunReport& report);

// Text safe inside HTML/XML element content and attribute values: control characters and invalid
// UTF-8 handled as sanitize_text does, then & < > " ' escaped.
std::string html_escape(std::string_view text);

}  // namespace preflight::outcome
