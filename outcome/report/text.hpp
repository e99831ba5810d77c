// Text helpers shared by the report renderers and the action reasons: everything that came from a
// node is sanitized here before it is printed or handed to another tool.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

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
