#include "outcome/report/junit.hpp"

#include <map>
#include <set>
#include <vector>

#include "outcome/budget_notices.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome {

namespace {

struct Case {
    std::string node;
    const NodeCheck* check = nullptr;  // null: the node has no result for this check
    const NodeReport* report = nullptr;
};

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

}  // namespace

std::string xml_escape(std::string_view text) {
    // XML 1.0 forbids C0 controls except tab/newline/CR; sanitize_text removes all of them.
    return html_escape(text);
}

std::string render_junit(const RunReport& r) {
    // Checks in the order the config lists them, then any others the nodes report.
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
    // Checks left out for the run's time budget (`--budget-s`): not run, so skipped, never an
    // error for want of a result.
    std::map<std::string, std::string> left_out;
    for (const auto& l : left_out_for_budget(r)) {
        left_out[l.check] = "left out for the time budget: expected " +
                            format_significant(l.expected_s, 3) + " s; last ran " + l.last_ran;
    }
    std::map<std::string, std::vector<Case>> suites;
    for (const auto& check : checks) {
        auto& cases = suites[check];
        for (const auto& n : r.nodes) {
            Case c;
            c.node = n.name;
            c.report = &n;
            for (const auto& nc : n.checks) {
                if (nc.check == check) {
                    c.check = &nc;
                }
            }
            cases.push_back(c);
        }
    }
    std::string body;
    for (const auto& check : checks) {
        const auto& cases = suites[check];
        int s_fail = 0, s_err = 0, s_skip = 0;
        std::string cases_xml;
        std::string suite_out;
        for (const auto& c : cases) {
            const std::string detail = c.check ? c.check->detail : std::string();
            std::string metric;
            if (c.check) {
                if (auto it = c.check->metrics.find("busbw_gbps"); it != c.check->metrics.end()) {
                    metric = "busbw_gbps " + format_significant(it->second, 4);
                    if (c.check->fraction_of_median) {
                        metric += " (" +
                                  format_significant(*c.check->fraction_of_median * 100.0, 3) +
                                  "% of median)";
                    }
                }
            }
            cases_xml += "    <testcase classname=\"preflight." + token_text(check) + "\" name=\"" +
                         token_text(c.node) + "\" time=\"0.000\"";
            if (!c.check) {
                if (auto l = left_out.find(check); l != left_out.end()) {
                    ++s_skip;
                    cases_xml += ">\n      <skipped message=\"" + xml_escape(l->second) +
                                 "\"/>\n    </testcase>\n";
                    continue;
                }
            }
            const core::Verdict v = c.check ? c.check->verdict : core::Verdict::error;
            const std::string message =
                c.check ? (detail.empty() ? metric : detail) : "no result for " + check;
            const std::string text = (metric.empty() ? "" : metric + "\n") + reasons_of(*c.report);
            // Ant's schema allows at most one of failure, error, skipped in a testcase and no
            // output of its own, so figures and warnings go to the suite's system-out.
            switch (v) {
                case core::Verdict::fail:
                    ++s_fail;
                    cases_xml += ">\n      <failure message=\"" + xml_escape(message) +
                                 "\" type=\"fail\">" + xml_escape(text) + "</failure>\n    " +
                                 "</testcase>\n";
                    break;
                case core::Verdict::error:
                    ++s_err;
                    cases_xml += ">\n      <error message=\"" + xml_escape(message) +
                                 "\" type=\"error\">" + xml_escape(text) + "</error>\n    " +
                                 "</testcase>\n";
                    break;
                case core::Verdict::skip:
                    ++s_skip;
                    cases_xml += ">\n      <skipped message=\"" + xml_escape(message) +
                                 "\"/>\n    </testcase>\n";
                    break;
                case core::Verdict::warn:
                    if (c.check != nullptr && c.check->undecided != core::Undecided::none) {
                        // Inconclusive or incomplete: not a pass, not a failure; CI tools show
                        // a skipped case, with the kind first in its message.
                        ++s_skip;
                        cases_xml += ">\n      <skipped message=\"" +
                                     xml_escape(std::string(core::to_string(c.check->undecided)) +
                                                ": " + message) +
                                     "\"/>\n    </testcase>\n";
                        break;
                    }
                    // JUnit has no "warning": the case passes and the finding stays visible.
                    cases_xml += "/>\n";
                    suite_out += xml_escape(c.node + ": warn: " + message) + "\n";
                    break;
                case core::Verdict::pass:
                    cases_xml += "/>\n";
                    if (!metric.empty()) {
                        suite_out += xml_escape(c.node + ": " + metric) + "\n";
                    }
                    break;
            }
        }
        body += "  <testsuite name=\"" + token_text(check) + "\" tests=\"" +
                std::to_string(cases.size()) + "\" failures=\"" + std::to_string(s_fail) +
                "\" errors=\"" + std::to_string(s_err) + "\" skipped=\"" + std::to_string(s_skip) +
                "\" time=\"" + seconds_text(r.wall_seconds) + "\" timestamp=\"" +
                xml_escape(ant_timestamp(r.started_at)) + "\" hostname=\"preflight\" id=\"" +
                std::to_string(&check - checks.data()) + "\" package=\"preflight\">\n";
        body += "    <properties>\n      <property name=\"run_id\" value=\"" +
                xml_escape(r.run_id) + "\"/>\n    </properties>\n";
        body += cases_xml;
        body += suite_out.empty() ? "    <system-out/>\n"
                                  : "    <system-out>" + suite_out + "</system-out>\n";
        body += "    <system-err/>\n  </testsuite>\n";
    }
    // Ant's schema allows no attributes on <testsuites>; readers sum the suites.
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
    out += body;
    out += "</testsuites>\n";
    return out;
}

}  // namespace preflight::outcome
