// JUnit XML for CI systems: one <testsuite> per check, one <testcase> per node and check
// (classname "preflight.<check>", name = node). fail -> <failure>, error -> <error>, skip ->
// <skipped>, warn -> passed with the finding in <system-out>. A node without a result for a
// configured check gets an <error> (missing data never passes). Follows the de-facto Jenkins/Ant
// schema (tests/fixtures/reports/junit.xsd).
#pragma once

#include <string>
#include <string_view>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

std::string render_junit(const RunReport& report);

// Text safe in XML 1.0 content and attributes: sanitize_text (no control characters, valid UTF-8)
// then & < > " ' escaped.
std::string xml_escape(std::string_view text);

}  // namespace preflight::outcome
