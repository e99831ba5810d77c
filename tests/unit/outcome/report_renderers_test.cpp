// Golden and property tests of the report renderers (HTML, Markdown, JUnit, Prometheus) on saved
// JSON reports (1 and 8 nodes, from real runs) and a generated 2048-node fleet. Set
// PREFLIGHT_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/build_info.hpp"
#include "outcome/budget_notices.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/json.hpp"
#include "outcome/report/junit.hpp"
#include "outcome/report/markdown.hpp"
#include "outcome/report/prometheus.hpp"
#include "outcome/report/terminal.hpp"
#include "tests/unit/outcome/report_fixtures.hpp"

namespace preflight::outcome {
namespace {

using core::build_commit;
using core::build_version;
using testing::fixture_path;
using testing::generated_report;
using testing::load_fixture;
using testing::read_text;

std::string golden_path(const std::string& name) {
    return fixture_path("golden/" + name);
}

// The build's version and commit change with every build; goldens hold placeholders instead.
std::string without_build_info(std::string text) {
    for (const auto& [value, placeholder] :
         {std::pair{"version=\"" + std::string(build_version()) + "\"", "version=\"VERSION\""},
          std::pair{"commit=\"" + std::string(build_commit()) + "\"", "commit=\"COMMIT\""}}) {
        for (auto at = text.find(value); at != std::string::npos; at = text.find(value, at)) {
            text.replace(at, value.size(), placeholder);
            at += std::string_view(placeholder).size();
        }
    }
    return text;
}

void expect_golden(const std::string& name, const std::string& rendered) {
    const std::string actual = without_build_info(rendered);
    const std::string path = golden_path(name);
    if (std::getenv("PREFLIGHT_UPDATE_GOLDEN") != nullptr) {
        // An update run compares nothing, so it never passes: set in CI, it fails the suite.
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        ASSERT_TRUE(core::write_file_atomic(path, actual));
        ADD_FAILURE() << "PREFLIGHT_UPDATE_GOLDEN is set: " << path
                      << " was rewritten and nothing was compared; review the diff and run "
                         "again without it";
        return;
    }
    ASSERT_TRUE(std::filesystem::exists(path))
        << path << " missing; run with PREFLIGHT_UPDATE_GOLDEN=1 to create it";
    EXPECT_EQ(read_text(path), actual)
        << "golden " << name << " differs; PREFLIGHT_UPDATE_GOLDEN=1 rewrites it";
}

bool have_tool(const std::string& name) {
    return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command; returns its exit status and puts stdout+stderr in output.
int run_shell(const std::string& command, std::string& output) {
    output.clear();
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        return -1;
    }
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        output.append(buf, n);
    }
    const int status = ::pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string temp_file(const std::string& name, const std::string& content) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight-report-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    EXPECT_TRUE(core::write_file_atomic(path, content));
    return path;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = haystack.find(needle); pos != std::string::npos;
         pos = haystack.find(needle, pos + needle.size())) {
        ++n;
    }
    return n;
}

// A report whose node names, reasons and details try to break out of every format.
RunReport hostile_report() {
    RunReport r = generated_report(4);
    r.nodes[0].name = "<img src=x onerror=alert(1)>";
    r.nodes[1].name = "a\"b\\c|d'e&f";
    r.nodes[1].verdict = core::Verdict::warn;
    r.nodes[2].name = "line\nbreak\x1b[31m";
    r.nodes[0].reasons = {"</td><script>alert('x')</script> | `code` *bold* ]]> --> \xff"};
    r.nodes[0].verdict = core::Verdict::fail;
    r.nodes[0].checks[1].verdict = core::Verdict::fail;
    r.nodes[0].checks[1].detail = "<b>\"quoted\"</b> & ]]>";
    r.nodes[0].checks[0].detail = "eth0: <down>";
    r.groups[0].members = {r.nodes[0].name, r.nodes[1].name};
    r.groups[0].error = "<err>";
    r.run_id = "run<&>\"";
    return r;
}

const char* const k_fixtures[] = {"run_1_node", "run_8_nodes"};

TEST(ReportFromJson, RoundTripsSavedReportsExactly) {
    // The saved reports were written before the undecided fields existed: they read back with
    // those at their defaults, and render exactly as saved apart from them.
    for (const char* name : k_fixtures) {
        const std::string text = read_text(fixture_path(std::string(name) + ".json"));
        const RunReport r = report_from_json(nlohmann::ordered_json::parse(text));
        auto rendered = nlohmann::ordered_json::parse(render_json(r));
        EXPECT_EQ(rendered["summary"]["inconclusive"], 0) << name;
        EXPECT_EQ(rendered["summary"]["incomplete"], 0) << name;
        rendered["summary"].erase("inconclusive");
        rendered["summary"].erase("incomplete");
        for (auto& node : rendered["nodes"]) {
            EXPECT_EQ(node["reference"], false) << name;
            node.erase("reference");
            for (auto& [check, c] : node["checks"].items()) {
                EXPECT_EQ(c["undecided"], "none") << name << " " << check;
                c.erase("undecided");
            }
        }
        EXPECT_EQ(rendered.dump(2) + "\n", text) << name;
    }
}

TEST(ReportFromJson, RoundTripsGeneratedReport) {
    const RunReport r = generated_report(300);
    const std::string text = render_json(r);
    EXPECT_EQ(render_json(report_from_json(nlohmann::ordered_json::parse(text))), text);
}

TEST(ReportFromJson, RejectsOtherSchemaVersionsAndUnknownVerdicts) {
    auto j = nlohmann::json::parse(render_json(generated_report(2)));
    auto other = j;
    other["schema_version"] = 2;
    EXPECT_THROW(report_from_json(other), std::runtime_error);
    auto bad = j;
    bad["nodes"][0]["verdict"] = "maybe";
    EXPECT_THROW(report_from_json(bad), std::runtime_error);
    auto wrong_type = j;
    wrong_type["nodes"][0]["name"] = 5;
    EXPECT_THROW(report_from_json(wrong_type), nlohmann::json::exception);
}

TEST(ReportFromJson, ToleratesMissingOptionalFields) {
    const auto r = report_from_json(nlohmann::json::parse(
        R"({"schema_version":1,"run_id":"x","nodes":[{"name":"n1","verdict":"pass"}]})"));
    ASSERT_EQ(r.nodes.size(), 1U);
    EXPECT_EQ(r.nodes[0].name, "n1");
    EXPECT_TRUE(r.groups.empty());
    EXPECT_FALSE(render_html(r).empty());
}

TEST(Golden, SavedReports) {
    for (const char* name : k_fixtures) {
        const RunReport r = load_fixture(std::string(name) + ".json");
        expect_golden(std::string(name) + ".html", render_html(r));
        expect_golden(std::string(name) + ".md", render_markdown(r));
        expect_golden(std::string(name) + ".junit.xml", render_junit(r));
        expect_golden(std::string(name) + ".prom", render_prometheus(r));
    }
}

TEST(Golden, GeneratedFleetOf2048) {
    const RunReport r = generated_report(2048);
    // Only the bounded formats are kept as files; JUnit and Prometheus grow with the fleet by
    // design (one line per node) and are checked by structure below.
    expect_golden("generated_2048.html", render_html(r));
    expect_golden("generated_2048.md", render_markdown(r));
}

TEST(Html, IsSelfContained) {
    for (const auto& r : {load_fixture("run_8_nodes.json"), generated_report(2048)}) {
        const std::string html = render_html(r);
        EXPECT_EQ(html.find("<script"), std::string::npos);
        EXPECT_EQ(html.find("http:"), std::string::npos);
        EXPECT_EQ(html.find("https:"), std::string::npos);
        EXPECT_EQ(html.find("src="), std::string::npos);
        EXPECT_EQ(html.find("url("), std::string::npos);
        EXPECT_EQ(html.find("@import"), std::string::npos);
        EXPECT_NE(html.find("<svg"), std::string::npos);
        EXPECT_NE(html.find("<style>"), std::string::npos);
    }
}

TEST(Html, SmallFleetDrawsOneBarPerNodeWithReferenceLinesAndMarksFailures) {
    const RunReport r = load_fixture("run_8_nodes.json");
    const std::string html = render_html(r);
    const auto chart_start = html.find("busBW per node</title>");
    ASSERT_NE(chart_start, std::string::npos);
    const std::string chart =
        html.substr(chart_start, html.find("</svg>", chart_start) - chart_start);
    EXPECT_EQ(count(chart, "<rect "), 8U);
    EXPECT_EQ(count(chart, "fill=\"#c62828\"><title>"), 1U);  // one red bar: h3, the degraded host
    EXPECT_NE(chart.find("\u2717 0.0242"), std::string::npos);
    EXPECT_NE(chart.find(">median 0.0481<"), std::string::npos);
    EXPECT_NE(chart.find(">threshold 0.0433<"), std::string::npos);
    // Sorted slowest first: h3 is the first label.
    EXPECT_LT(chart.find(">h3<"), chart.find(">h1<"));
    EXPECT_NE(html.find("groups by round"), std::string::npos);
    EXPECT_NE(html.find("scontrol update NodeName=h3 State=DRAIN"), std::string::npos);
}

TEST(Html, LargeFleetAggregatesInsteadOfLabellingEveryNode) {
    const RunReport r = generated_report(2048);
    const std::string html = render_html(r);
    EXPECT_NE(html.find("busBW histogram</title>"), std::string::npos);
    EXPECT_NE(html.find("<th>p99</th>"), std::string::npos);
    // Node labels: the 32 slowest in the bar chart, no matrix.
    EXPECT_LE(count(html, "class=\"label\""), 32U);
    EXPECT_EQ(html.find("group matrix"), std::string::npos);
    // Every node that did not pass is in the verdict table; passing ones are not listed.
    for (const auto& n : r.nodes) {
        if (n.verdict != core::Verdict::pass) {
            EXPECT_NE(html.find("<tr><td>" + n.name + "</td>"), std::string::npos) << n.name;
        }
    }
    EXPECT_EQ(html.find("<tr><td>gpu0000</td>"), std::string::npos);
    EXPECT_LT(html.size(), 200U * 1024U);
}

TEST(Html, EscapesEverythingFromNodes) {
    const std::string html = render_html(hostile_report());
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("<b>"), std::string::npos);
    EXPECT_EQ(html.find("<err>"), std::string::npos);
    EXPECT_EQ(html.find("<down>"), std::string::npos);
    EXPECT_EQ(html.find('\x1b'), std::string::npos);
    EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
    EXPECT_NE(html.find("a&quot;b\\c|d&#39;e&amp;f"), std::string::npos);
    EXPECT_EQ(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST(Markdown, ListsNonPassNodesAndEscapesTableCells) {
    const std::string md = render_markdown(load_fixture("run_8_nodes.json"));
    EXPECT_NE(md.find("| h3 | **fail** |"), std::string::npos);
    EXPECT_NE(md.find("7 pass, 0 warn, 1 fail"), std::string::npos);
    const std::string hostile = render_markdown(hostile_report());
    EXPECT_EQ(hostile.find("<img"), std::string::npos);
    EXPECT_EQ(hostile.find("<script"), std::string::npos);
    EXPECT_NE(hostile.find("a\"b\\\\c\\|d'e&f"), std::string::npos);
    EXPECT_EQ(markdown_escape("a|b*c"), "a\\|b\\*c");
    // The 2048-node summary stays short.
    const RunReport big_report = generated_report(2048);
    const std::string big = render_markdown(big_report);
    std::size_t bad = 0;
    for (const auto& n : big_report.nodes) {
        if (n.verdict != core::Verdict::pass) {
            ++bad;
            EXPECT_NE(big.find("| " + n.name + " |"), std::string::npos) << n.name;
        }
    }
    EXPECT_GT(bad, 20U);
    EXPECT_LT(count(big, "\n"), 120U);
    // Past k_markdown_max_rows non-pass nodes the rest is counted, not listed.
    RunReport all_bad = generated_report(200);
    for (auto& n : all_bad.nodes) {
        n.verdict = core::Verdict::error;
    }
    const std::string capped = render_markdown(all_bad);
    EXPECT_NE(capped.find("150 more non-pass nodes in report.json"), std::string::npos);
}

TEST(Junit, OneTestcasePerNodeAndCheckWithVerdictMapping) {
    const std::string xml = render_junit(load_fixture("run_8_nodes.json"));
    EXPECT_EQ(count(xml, "<testcase "), 16U);  // 8 nodes x 2 checks
    EXPECT_EQ(count(xml, "<failure "), 1U);
    EXPECT_NE(xml.find("<testsuite name=\"collective.gloo_allreduce\" tests=\"8\" failures=\"1\" "
                       "errors=\"0\" skipped=\"0\""),
              std::string::npos);
    const std::string one = render_junit(load_fixture("run_1_node.json"));
    EXPECT_EQ(count(one, "<skipped "), 1U);
    const RunReport big = generated_report(2048);
    const std::string big_xml = render_junit(big);
    EXPECT_EQ(count(big_xml, "<testcase "), 4096U);
    int fail = 0, error = 0;
    for (const auto& n : big.nodes) {
        fail += n.verdict == core::Verdict::fail ? 1 : 0;
        error += n.verdict == core::Verdict::error ? 1 : 0;
    }
    EXPECT_EQ(count(big_xml, "<failure "), static_cast<std::size_t>(fail));
    EXPECT_EQ(count(big_xml, "<error "), static_cast<std::size_t>(error));
}

TEST(Junit, NodeWithoutResultForAConfiguredCheckIsAnError) {
    RunReport r = generated_report(2);
    r.nodes[1].checks.pop_back();
    r.nodes[1].verdict = core::Verdict::error;
    const std::string xml = render_junit(r);
    EXPECT_NE(xml.find("<error message=\"no result for collective.gloo_allreduce\""),
              std::string::npos);
}

// `--budget-s` left the Gloo check out: each node's case is skipped, with when it last ran, not
// an error for want of a result (which CI would count against the nodes).
TEST(Junit, ACheckLeftOutForTheTimeBudgetIsSkippedNotAnError) {
    const std::string xml = render_junit(testing::budget_report());
    EXPECT_EQ(xml.find("<error"), std::string::npos) << xml;
    EXPECT_EQ(count(xml,
                    "<skipped message=\"left out for the time budget: expected 2.50 s; last "
                    "ran 2026-11-26T20:25:46Z\"/>"),
              3u)
        << xml;
    EXPECT_NE(xml.find("name=\"collective.gloo_allreduce\" tests=\"3\" failures=\"0\" "
                       "errors=\"0\" skipped=\"3\""),
              std::string::npos)
        << xml;
}

// Every report says what the budget left out and when it last ran; one that ran out says so.
TEST(BudgetNotices, TerminalMarkdownAndHtmlNameTheChecksLeftOut) {
    for (bool used_up : {false, true}) {
        const auto r = testing::budget_report(used_up);
        const std::string term = render_terminal(r, false);
        const std::string md = render_markdown(r);
        const std::string html = render_html(r);
        for (const auto* text : {&term, &md, &html}) {
            EXPECT_NE(text->find("Time budget 1 s: 1 of 2 check(s) run; left out for the budget:"),
                      std::string::npos)
                << *text;
            const std::string check =
                text == &md ? "collective.gloo\\_allreduce" : "collective.gloo_allreduce";
            EXPECT_NE(text->find(check + ": expected 2.5 s; last ran 2026-11-26T20:25:46Z"),
                      std::string::npos)
                << *text;
            EXPECT_EQ(text->find("TIME BUDGET USED UP") != std::string::npos, used_up) << *text;
        }
    }
    EXPECT_TRUE(budget_notices(generated_report(4)).empty());  // no budget, nothing said
}

// Validation against the real JUnit schemas: report_interfaces_test.cpp.

// A parser for the Prometheus text exposition format 0.0.4, strict enough to catch what
// promtool's parser rejects: names, label syntax and escapes, values, HELP/TYPE before samples.
struct Exposition {
    std::map<std::string, std::string> types;
    std::map<std::string, std::string> help;
    std::vector<std::pair<std::string, std::map<std::string, std::string>>> samples;
    std::vector<double> values;
    std::string error;
};

Exposition parse_exposition(const std::string& text) {
    Exposition e;
    std::istringstream in(text);
    std::string line;
    const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
    const std::regex value_re("[-+]?([0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?|NaN|Inf)");
    // Built once: compiling a std::regex per label made the 2048-node case take minutes under ASan.
    const std::regex label_re("[a-zA-Z_][a-zA-Z0-9_]*");
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        auto fail = [&](const std::string& why) {
            if (e.error.empty()) {
                e.error = "line " + std::to_string(lineno) + ": " + why + ": " + line;
            }
        };
        if (line.empty()) {
            continue;
        }
        if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
            const std::string rest = line.substr(7);
            const auto sp = rest.find(' ');
            const std::string name = rest.substr(0, sp);
            if (!std::regex_match(name, name_re) || sp == std::string::npos) {
                fail("bad comment");
            }
            if (line[2] == 'T') {
                const std::string type = rest.substr(sp + 1);
                if (type != "gauge" && type != "counter" && type != "untyped") {
                    fail("bad type");
                }
                if (e.types.count(name) != 0) {
                    fail("duplicate TYPE");
                }
                e.types[name] = type;
            } else {
                e.help[name] = rest.substr(sp + 1);
            }
            continue;
        }
        if (line[0] == '#') {
            continue;
        }
        std::size_t i = 0;
        while (i < line.size() && line[i] != '{' && line[i] != ' ') {
            ++i;
        }
        const std::string name = line.substr(0, i);
        if (!std::regex_match(name, name_re)) {
            fail("bad metric name");
        }
        if (e.types.count(name) == 0 || e.help.count(name) == 0) {
            fail("sample before its HELP/TYPE");
        }
        std::map<std::string, std::string> labels;
        if (i < line.size() && line[i] == '{') {
            ++i;
            while (i < line.size() && line[i] != '}') {
                std::size_t eq = line.find('=', i);
                if (eq == std::string::npos) {
                    fail("label without =");
                    break;
                }
                const std::string label = line.substr(i, eq - i);
                if (!std::regex_match(label, label_re)) {
                    fail("bad label name");
                }
                i = eq + 1;
                if (i >= line.size() || line[i] != '"') {
                    fail("label value not quoted");
                    break;
                }
                ++i;
                std::string value;
                while (i < line.size() && line[i] != '"') {
                    if (line[i] == '\\') {
                        ++i;
                        if (i >= line.size()) {
                            break;
                        }
                        if (line[i] == 'n') {
                            value += '\n';
                        } else if (line[i] == '\\' || line[i] == '"') {
                            value += line[i];
                        } else {
                            fail("bad escape");
                        }
                    } else {
                        value += line[i];
                    }
                    ++i;
                }
                if (i >= line.size()) {
                    fail("unterminated label value");
                    break;
                }
                ++i;  // closing quote
                if (labels.count(label) != 0) {
                    fail("duplicate label");
                }
                labels[label] = value;
                if (i < line.size() && line[i] == ',') {
                    ++i;
                }
            }
            if (i >= line.size() || line[i] != '}') {
                fail("unterminated labels");
                continue;
            }
            ++i;
        }
        if (i >= line.size() || line[i] != ' ') {
            fail("no value");
            continue;
        }
        const std::string value = line.substr(i + 1);
        if (!std::regex_match(value, value_re)) {
            fail("bad value");
            continue;
        }
        e.samples.emplace_back(name, labels);
        e.values.push_back(value == "NaN" ? 0.0 : std::stod(value));
    }
    return e;
}

TEST(Prometheus, ParsesAsTheExpositionFormat) {
    for (const auto& r : {load_fixture("run_1_node.json"), load_fixture("run_8_nodes.json"),
                          generated_report(2048), hostile_report()}) {
        const auto e = parse_exposition(render_prometheus(r));
        EXPECT_EQ(e.error, "") << r.run_id;
        // Exactly one verdict is 1 per node.
        std::map<std::string, double> per_node;
        std::set<std::string> names;
        for (std::size_t i = 0; i < e.samples.size(); ++i) {
            if (e.samples[i].first == "preflight_node_verdict") {
                per_node[e.samples[i].second.at("node")] += e.values[i];
            }
        }
        for (const auto& n : r.nodes) {
            EXPECT_EQ(per_node[sanitize_text(n.name)], 1.0) << n.name;
        }
        EXPECT_EQ(e.types.at("preflight_busbw_bytes_per_second"), "gauge");
        EXPECT_EQ(e.types.at("preflight_run_timestamp_seconds"), "gauge");
    }
}

TEST(Prometheus, EscapesLabelValuesAndCarriesTheRunTime) {
    const auto r = hostile_report();
    const std::string text = render_prometheus(r);
    EXPECT_NE(text.find("node=\"a\\\"b\\\\c|d'e&f\""), std::string::npos);
    EXPECT_EQ(count(text, "\x1b"), 0U);
    const auto e = parse_exposition(render_prometheus(load_fixture("run_8_nodes.json")));
    ASSERT_FALSE(e.values.empty());
    EXPECT_EQ(e.samples.back().first, "preflight_run_timestamp_seconds");
    EXPECT_DOUBLE_EQ(e.values.back(), 1795310888.0);  // 2026-11-22T01:28:08Z
    EXPECT_EQ(prometheus_label_escape("a\\b\"c"), "a\\\\b\\\"c");
}

TEST(Prometheus, UnixSecondsParsesRfc3339) {
    EXPECT_EQ(unix_seconds("1970-01-01T00:00:00Z"), 0.0);
    EXPECT_EQ(unix_seconds("2026-01-02T03:04:05Z"), 1767323045.0);
    EXPECT_EQ(unix_seconds("2026-01-02T03:04:05.5Z"), 1767323045.5);
    EXPECT_EQ(unix_seconds("2026-01-02T04:04:05+01:00"), 1767323045.0);
    EXPECT_FALSE(unix_seconds("yesterday"));
    EXPECT_FALSE(unix_seconds("2026-01-02T03:04:05"));
}

TEST(Prometheus, PassesPromtoolCheckMetrics) {
    if (!have_tool("promtool")) {
        GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
    }
    for (const auto& [name, report] : std::vector<std::pair<std::string, RunReport>>{
             {"one.prom", load_fixture("run_1_node.json")},
             {"eight.prom", load_fixture("run_8_nodes.json")},
             {"big.prom", generated_report(2048)},
             {"hostile.prom", hostile_report()}}) {
        const std::string path = temp_file(name, render_prometheus(report));
        std::string out;
        EXPECT_EQ(run_shell("promtool check metrics < '" + path + "'", out), 0) << name << out;
        EXPECT_EQ(out, "") << name;  // no lint findings either
    }
}

TEST(WriteReportFiles, WritesEveryFormat) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight-report-files-" + std::to_string(::getpid()));
    ASSERT_TRUE(write_report_files(load_fixture("run_8_nodes.json"), dir.string(), ""));
    for (const char* f : {"report.json", "report.txt", "report.html", "report.md",
                          "report.junit.xml", "report.prom"}) {
        EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
        EXPECT_GT(std::filesystem::file_size(dir / f), 100U) << f;
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace preflight::outcome
