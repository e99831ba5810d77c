#include "outcome/report/junit.hpp"

#include <map>
#include <set>
#include <vector>

#include "outcome/budget_notices.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome {

namespace {

// Both schemas want a plain non-negative decimal (Jenkins' SUREFIRE_TIME, Ant's xs:decimal).
std::string seconds_text(double s) {
    if (!(s >= 0.0) || s > 1e9) {
        s = 0.0;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return buf;
}

// Ant's schema wants "YYYY-MM-DDThh:mm:ss" exactly (no fraction, no zone), so the trailing Z (all
// our times are UTC) is dropped; anything else reads as the epoch rather than break the file.
std::string ant_timestamp(const std::string& rfc3339) {
    static const char* const k_shape = "dddd-dd-ddTdd:dd:dd";
    if (rfc3339.size() < 19) {
        return "1970-01-01T00:00:00";
    }
    for (std::size_t i = 0; i < 19; ++i) {
        const char c = rfc3339[i];
        const bool ok = k_shape[i] == 'd' ? (c >= '0' && c <= '9') : c == k_shape[i];
        if (!ok) {
            return "1970-01-01T00:00:00";
        }
    }
    return rfc3339.substr(0, 19);
}

// Ant's schema types names as non-empty xs:token.
std::string token_text(const std::string& text) {
    return text.empty() ? std::string("(unnamed)") : xml_escape(text);
}

std::string reasons_of(const NodeReport& n) {
    std::string out;
    for (const auto& r : n.reasons) {
        out += r + "\n";
    }
    return out;
}

// Checks in the order the config lists them, then any others the nodes report.
std::vector<std::string> suite_checks(const RunReport& r) {
    std::vector<std::string> checks;
    std::set<std::string> seen;
    if (r.config.is_object()) {
        if (auto it = r.config.find("checks"); it != r.config.end() && it->is_array()) {
            for (const auto& c : *it) {
                if (c.is_string() && seen.insert(c.get<std::string>()).second) {
                    checks.push_back(c.get<std::string>());
                }
            }
        }
    }
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (seen.insert(c.check).second) {
                checks.push_back(c.check);
            }
        }
    }
    if (checks.empty() && !r.nodes.empty()) {
        checks.push_back("node");  // nodes that never ran anything still get a testcase each
    }
    return checks;
}

// Checks left out for the run's time budget (`--budget-s`), with the message of their skip: not
// run, so skipped, never an error for want of a result.
std::map<std::string, std::string> budget_skips(const RunReport& r) {
    std::map<std::string, std::string> left_out;
    for (const auto& l : left_out_for_budget(r)) {
        left_out[l.check] = "left out for the time budget: expected " +
                            format_significant(l.expected_s, 3) + " s; last ran " + l.last_ran;
    }
    return left_out;
}

// The node's result for check (the last one when it reports several); null when it has none.
const NodeCheck* result_for(const NodeReport& n, const std::string& check) {
    const NodeCheck* found = nullptr;
    for (const auto& nc : n.checks) {
        if (nc.check == check) {
            found = &nc;
        }
    }
    return found;
}

// "busbw_gbps 123.4 (98.5% of median)", or "" for a result without busBW.
std::string busbw_text(const NodeCheck* check) {
    if (check == nullptr) {
        return {};
    }
    const auto it = check->metrics.find("busbw_gbps");
    if (it == check->metrics.end()) {
        return {};
    }
    std::string metric = "busbw_gbps " + format_significant(it->second, 4);
    if (check->fraction_of_median) {
        metric += " (" + format_significant(*check->fraction_of_median * 100.0, 3) + "% of median)";
    }
    return metric;
}

// One check's suite as it is built: its testcases, counts and system-out.
struct Suite {
    int failures = 0;
    int errors = 0;
    int skipped = 0;
    std::string cases_xml;
    std::string out;  // the suite's system-out
};

// The end of a testcase that holds one element: ">\n      <elem .../>\n    </testcase>\n".
std::string closing(const std::string& element) {
    return ">\n      " + element + "\n    </testcase>\n";
}

// One node's testcase in check's suite. Ant's schema allows at most one of failure, error,
// skipped in a testcase and no output of its own, so figures and warnings go to the suite's
// system-out.
void add_case(Suite& suite, const std::string& check, const NodeReport& node,
              const std::map<std::string, std::string>& left_out) {
    const NodeCheck* result = result_for(node, check);
    const std::string detail = result ? result->detail : std::string();
    const std::string metric = busbw_text(result);
    suite.cases_xml += "    <testcase classname=\"preflight." + token_text(check) + "\" name=\"" +
                       token_text(node.name) + "\" time=\"0.000\"";
    if (!result) {
        if (auto l = left_out.find(check); l != left_out.end()) {
            ++suite.skipped;
            suite.cases_xml += closing("<skipped message=\"" + xml_escape(l->second) + "\"/>");
            return;
        }
    }
    const core::Verdict v = result ? result->verdict : core::Verdict::error;
    const std::string message =
        result ? (detail.empty() ? metric : detail) : "no result for " + check;
    const std::string text = (metric.empty() ? "" : metric + "\n") + reasons_of(node);
    switch (v) {
        case core::Verdict::fail:
            ++suite.failures;
            suite.cases_xml += closing("<failure message=\"" + xml_escape(message) +
                                       "\" type=\"fail\">" + xml_escape(text) + "</failure>");
            break;
        case core::Verdict::error:
            ++suite.errors;
            suite.cases_xml += closing("<error message=\"" + xml_escape(message) +
                                       "\" type=\"error\">" + xml_escape(text) + "</error>");
            break;
        case core::Verdict::skip:
            ++suite.skipped;
            suite.cases_xml += closing("<skipped message=\"" + xml_escape(message) + "\"/>");
            break;
        case core::Verdict::warn:
            if (result != nullptr && result->undecided != core::Undecided::none) {
                // Inconclusive or incomplete: not a pass, not a failure; CI tools show a skipped
                // case, with the kind first in its message.
                ++suite.skipped;
                suite.cases_xml += closing(
                    "<skipped message=\"" +
                    xml_escape(std::string(core::to_string(result->undecided)) + ": " + message) +
                    "\"/>");
                break;
            }
            // JUnit has no "warning": the case passes and the finding stays visible.
            suite.cases_xml += "/>\n";
            suite.out += xml_escape(node.name + ": warn: " + message) + "\n";
            break;
        case core::Verdict::pass:
            suite.cases_xml += "/>\n";
            if (!metric.empty()) {
                suite.out += xml_escape(node.name + ": " + metric) + "\n";
            }
            break;
    }
}

// The <testsuite> element of check, the index-th suite of the run.
std::string suite_xml(const RunReport& r, const std::string& check, std::size_t index,
                      const Suite& suite) {
    std::string xml =
        "  <testsuite name=\"" + token_text(check) + "\" tests=\"" +
        std::to_string(r.nodes.size()) + "\" failures=\"" + std::to_string(suite.failures) +
        "\" errors=\"" + std::to_string(suite.errors) + "\" skipped=\"" +
        std::to_string(suite.skipped) + "\" time=\"" + seconds_text(r.wall_seconds) +
        "\" timestamp=\"" + xml_escape(ant_timestamp(r.started_at)) +
        "\" hostname=\"preflight\" id=\"" + std::to_string(index) + "\" package=\"preflight\">\n";
    xml += "    <properties>\n      <property name=\"run_id\" value=\"" + xml_escape(r.run_id) +
           "\"/>\n    </properties>\n";
    xml += suite.cases_xml;
    xml += suite.out.empty() ? "    <system-out/>\n"
                             : "    <system-out>" + suite.out + "</system-out>\n";
    xml += "    <system-err/>\n  </testsuite>\n";
    return xml;
}

}  // namespace

std::string xml_escape(std::string_view text) {
    // XML 1.0 forbids C0 controls except tab/newline/CR; sanitize_text removes all of them.
    return html_escape(text);
}

std::string render_junit(const RunReport& r) {
    const auto checks = suite_checks(r);
    const auto left_out = budget_skips(r);
    // Ant's schema allows no attributes on <testsuites>; readers sum the suites.
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
    for (std::size_t i = 0; i < checks.size(); ++i) {
        Suite suite;
        for (const auto& n : r.nodes) {
            add_case(suite, checks[i], n, left_out);
        }
        out += suite_xml(r, checks[i], i, suite);
    }
    out += "</testsuites>\n";
    return out;
}

}  // namespace preflight::outcome
