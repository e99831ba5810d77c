// A Markdown summary for tickets and chat: verdict counts, per collective check the busBW spread,
// the non-pass nodes with their reasons (at most k_markdown_max_rows), actions, the breaker and,
// when the config names a job profile, the job impact. Node-supplied text is escaped for tables.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

inline constexpr std::size_t k_markdown_max_rows = 50;

std::string render_markdown(const RunReport& report);

// Text safe in a Markdown table cell: sanitized, '|' '\' '`' '*' '_' '[' ']' '#' backslash-escaped,
// '<' '>' as entities.
std::string markdown_escape(std::string_view text);

}  // namespace preflight::outcome
