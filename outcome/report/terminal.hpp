// The operator's view of a RunReport: a plain-text table (one row per node, failed and inconclusive
// nodes first), the reasons for every non-pass node, the planned or applied actions and the circuit
// breaker's verdict. ANSI colour only when asked for. Every string that came from a node or an
// agent is stripped of control characters before it reaches the terminal.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

// The table as text, ending in a newline. Linear in the number of nodes (plus the sort).
std::string render_terminal(const RunReport& report, bool color);

// The metric a check is judged and shown by: busbw_gbps, else speed_mbps, else the metric whose
// value / median matches fraction_of_median, else the first one. Empty when the check has none.
std::optional<std::pair<std::string, double>> headline_metric(const NodeCheck& check);

// A number with `digits` significant digits in fixed notation ("185", "18.5", "0.185"); never
// exponent notation, "nan" / "inf" for non-finite values.
std::string format_significant(double value, int digits = 3);

// Text safe to print and to hand to other tools: C0 and C1 control characters and DEL (newlines,
// escape sequences) become spaces, bytes that are not valid UTF-8 become '?'.
std::string sanitize_text(std::string_view text);

// Code points in valid UTF-8 text: the column width we assume (no East Asian wide characters).
std::size_t display_width(std::string_view text);

}  // namespace preflight::outcome
