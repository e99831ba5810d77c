// The operator's view of a RunReport: a plain-text table (one row per node, failed and inconclusive
// nodes first), the reasons for every non-pass node, the planned or applied actions and the circuit
// breaker's verdict. ANSI colour only when asked for. Every string that came from a node or an
// agent is stripped of control characters before it reaches the terminal.
#pragma once

#include <string>

#include "outcome/report/text.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

// The table as text, ending in a newline. Linear in the number of nodes (plus the sort).
std::string render_terminal(const RunReport& report, bool color);

}  // namespace preflight::outcome
