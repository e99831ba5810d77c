// JUnit XML for CI systems: one <testsuite> per check, one <testcase> per node and check
// (classname "preflight.<check>", name = node). fail -> <failure>, error -> <error>, skip ->
// <skipped>, warn -> passed with the finding in the suite's <system-out>, as are the busBW figures.
// A node without a result for a configured check gets an <error> (missing data never passes). One
// document valid against both schemas CI tools validate with, Jenkins xUnit's junit-10.xsd and
// Ant's JUnit.xsd (tests/fixtures/reports/README.md): so <testsuites> has no attributes and a
// testcase holds at most one result element and no output.
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
