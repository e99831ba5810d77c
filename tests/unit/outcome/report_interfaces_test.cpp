// The report files operators script against, checked with the tools and schemas their consumers
// use: report.junit.xml with xmllint against Jenkins xUnit's junit-10.xsd and Ant's JUnit.xsd,
// report.prom with promtool, report.json with python3-jsonschema against docs/report.schema.json.
// Inputs: the golden files, the saved real runs (tests/fixtures/reports/*.json), a generated
// 2048-node fleet and a report with hostile names. A missing tool skips with the package to
// install.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/build_info.hpp"
#include "core/process.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/json_document.hpp"
#include "outcome/report/junit.hpp"
#include "outcome/report/prometheus.hpp"
#include "tests/unit/outcome/report_fixtures.hpp"

namespace preflight::outcome {
namespace {

using core::build_commit;
using core::build_version;
using testing::fixture_path;
using testing::generated_report;
using testing::load_fixture;
using testing::read_text;

// Runs argv (never a shell): its exit status, with stdout+stderr in output; -1 when it cannot
// start.
int run(const std::vector<std::string>& argv, std::string& output,
        const std::string& stdin_data = "") {
    core::ProcessOptions options;
    options.timeout = std::chrono::seconds(120);
    options.stdin_data = stdin_data;
    auto r = core::run_process(argv, options);
    if (!r) {
        output = r.error().message;
        return -1;
    }
    output = r->output;
    return r->exit_code;
}

bool have_tool(const std::vector<std::string>& argv) {
    std::string out;
    return run(argv, out) == 0;
}

std::string temp_file(const std::string& name, const std::string& content) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight-interfaces-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
    return path.string();
}

// Names and texts that try to break out of XML, the exposition format and JSON.
RunReport hostile_report() {
    RunReport r = generated_report(4);
    r.nodes[0].name = "<img src=x onerror=alert(1)>";
    r.nodes[1].name = "a\"b\\c|d'e&f";
    r.nodes[1].verdict = core::Verdict::warn;
    r.nodes[1].checks[0].verdict = core::Verdict::warn;
    r.nodes[2].name = "line\nbreak\x1b[31m";
    r.nodes[3].checks[0].verdict = core::Verdict::skip;
    r.nodes[0].reasons = {"</td><script>alert('x')</script> ]]> --> \xff"};
    r.nodes[0].verdict = core::Verdict::fail;
    r.nodes[0].checks[1].verdict = core::Verdict::fail;
    r.nodes[0].checks[1].detail = "<b>\"quoted\"</b> & ]]>";
    r.run_id = "run<&>\"";
    r.started_at = "not a time";
    r.wall_seconds = -1.0;
    return r;
}

std::vector<std::pair<std::string, RunReport>> inputs() {
    return {{"run_1_node", load_fixture("run_1_node.json")},
            {"run_8_nodes", load_fixture("run_8_nodes.json")},
            {"generated_2048", generated_report(2048)},
            {"hostile", hostile_report()},
            {"budget", testing::budget_report()}};
}

const char* const k_junit_schemas[] = {"jenkins-xunit-junit-10.xsd", "ant-junit.xsd"};

std::string xmllint(const std::string& xsd, const std::string& path, std::string& out) {
    const int rc = run({"xmllint", "--noout", "--schema", fixture_path(xsd), path}, out);
    return rc == 0 ? "" : xsd + ": " + out;
}

TEST(JunitSchemas, GoldenAndRenderedReportsValidateAgainstBoth) {
    if (!have_tool({"xmllint", "--version"})) {
        GTEST_SKIP() << "xmllint not installed (Debian libxml2-utils)";
    }
    std::vector<std::string> files = {fixture_path("golden/run_1_node.junit.xml"),
                                      fixture_path("golden/run_8_nodes.junit.xml")};
    for (const auto& [name, report] : inputs()) {
        files.push_back(temp_file(name + ".junit.xml", render_junit(report)));
    }
    for (const auto& path : files) {
        for (const char* xsd : k_junit_schemas) {
            std::string out;
            EXPECT_EQ(xmllint(xsd, path, out), "") << path;
        }
    }
}

TEST(JunitSchemas, EachSchemaRejectsWhatItShould) {
    if (!have_tool({"xmllint", "--version"})) {
        GTEST_SKIP() << "xmllint not installed (Debian libxml2-utils)";
    }
    // A testcase without a name: both refuse.
    const std::string nameless = temp_file(
        "nameless.xml",
        "<testsuites><testsuite name=\"x\" tests=\"1\" failures=\"0\" errors=\"0\" time=\"0\" "
        "timestamp=\"2026-01-01T00:00:00\" hostname=\"h\" id=\"0\" package=\"p\"><properties/>"
        "<testcase classname=\"c\" time=\"0\"/><system-out/><system-err/></testsuite>"
        "</testsuites>");
    // What the writer used to emit: totals on <testsuites>, output inside a testcase.
    const std::string totals = temp_file(
        "totals.xml",
        "<testsuites tests=\"1\" skipped=\"0\"><testsuite name=\"x\" tests=\"1\" failures=\"0\" "
        "errors=\"0\" time=\"0\" timestamp=\"2026-01-01T00:00:00\" hostname=\"h\" id=\"0\" "
        "package=\"p\"><properties/><testcase classname=\"c\" name=\"n\" time=\"0\">"
        "<system-out>x</system-out></testcase><system-out/><system-err/></testsuite>"
        "</testsuites>");
    for (const char* xsd : k_junit_schemas) {
        std::string out;
        EXPECT_NE(xmllint(xsd, nameless, out), "") << xsd;
        EXPECT_NE(xmllint(xsd, totals, out), "") << xsd;
    }
}

TEST(JunitSchemas, VerdictsMapToOneResultElementEach) {
    const std::string xml = render_junit(hostile_report());
    EXPECT_EQ(xml.find("<testsuites>\n"), xml.find("<testsuites"));
    EXPECT_NE(xml.find("<failure message="), std::string::npos);
    EXPECT_NE(xml.find("<skipped message="), std::string::npos);
    // The warning stays visible, in the suite's output.
    EXPECT_NE(xml.find(": warn: "), std::string::npos);
    EXPECT_NE(xml.find("timestamp=\"1970-01-01T00:00:00\""), std::string::npos);
    EXPECT_NE(xml.find("time=\"0.000\" timestamp="), std::string::npos);
}

TEST(PrometheusNames, BaseUnitsAndBuildInfo) {
    const std::string text = render_prometheus(load_fixture("run_8_nodes.json"));
    EXPECT_EQ(text.find("_gbps"), std::string::npos) << "GB/s is not a base unit";
    // h1's busBW in run_8_nodes.json is 0.04723912830884863 GB/s.
    EXPECT_NE(text.find("preflight_busbw_bytes_per_second{node=\"h1\",check=\"collective.gloo_"
                        "allreduce\"} 47239128.31\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("# TYPE preflight_build_info gauge\n"), std::string::npos);
    EXPECT_NE(text.find("preflight_build_info{version=\"" + std::string(build_version()) +
                        "\",commit=\"" + std::string(build_commit()) + "\"} 1\n"),
              std::string::npos);
    EXPECT_FALSE(build_version().empty());
    EXPECT_FALSE(build_commit().empty());
}

// The build that ran a run is in report.json (and read back) and in the HTML metadata; reports
// saved before 0.2.0 have none and say nothing.
TEST(ReportBuild, JsonAndHtmlCarryTheVersionOfTheRun) {
    RunReport report = load_fixture("run_1_node.json");
    EXPECT_TRUE(report.preflight_version.empty());
    EXPECT_EQ(render_json(report).find("\"preflight\""), std::string::npos);
    EXPECT_EQ(render_html(report).find("<th>preflight</th>"), std::string::npos);

    report.preflight_version = "0.2.0";
    report.preflight_commit = "0123456789ab";
    const auto j = nlohmann::json::parse(render_json(report));
    EXPECT_EQ(j["preflight"], (nlohmann::json{{"version", "0.2.0"}, {"commit", "0123456789ab"}}));
    const RunReport back = report_from_json(j);
    EXPECT_EQ(back.preflight_version, "0.2.0");
    EXPECT_EQ(back.preflight_commit, "0123456789ab");
    EXPECT_NE(render_html(report).find("<th>preflight</th><td>0.2.0 (commit 0123456789ab)</td>"),
              std::string::npos);
}

TEST(PrometheusNames, GoldenAndRenderedReportsPassPromtool) {
    if (!have_tool({"promtool", "--version"})) {
        GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
    }
    std::vector<std::string> files = {fixture_path("golden/run_1_node.prom"),
                                      fixture_path("golden/run_8_nodes.prom")};
    for (const auto& [name, report] : inputs()) {
        files.push_back(temp_file(name + ".prom", render_prometheus(report)));
    }
    for (const auto& path : files) {
        std::string out;
        EXPECT_EQ(run({"promtool", "check", "metrics"}, out, read_text(path)), 0) << path << out;
        EXPECT_EQ(out, "") << path;  // no lint findings either
    }
}

const std::string k_schema = std::string(PREFLIGHT_SOURCE_DIR) + "/docs/report.schema.json";

// Validates with python3-jsonschema (Draft 2020-12); "" when valid, else the errors.
std::string validate_json(const std::string& path) {
    const std::string script =
        "import json,sys,jsonschema\n"
        "s=json.load(open(sys.argv[1]))\n"
        "jsonschema.Draft202012Validator.check_schema(s)\n"
        "errs=[f\"{list(e.absolute_path)}: {e.message}\" for e in "
        "jsonschema.Draft202012Validator(s).iter_errors(json.load(open(sys.argv[2])))]\n"
        "print(chr(10).join(errs)); sys.exit(1 if errs else 0)\n";
    const std::string py = temp_file("validate.py", script);
    std::string out;
    const int rc = run({"python3", py, k_schema, path}, out);
    return rc == 0 ? "" : (out.empty() ? "exit " + std::to_string(rc) : out);
}

bool have_jsonschema() {
    return have_tool({"python3", "-c", "import jsonschema; jsonschema.Draft202012Validator"});
}

TEST(ReportJsonSchema, SavedRunsAndRenderedReportsValidate) {
    if (!have_jsonschema()) {
        GTEST_SKIP() << "python3 jsonschema not installed (Debian python3-jsonschema)";
    }
    std::vector<std::string> files = {fixture_path("run_1_node.json"),
                                      fixture_path("run_8_nodes.json")};
    RunReport with_stages = load_fixture("run_8_nodes.json");
    with_stages.stages = {{"plan", 0.01}, {"rounds", 9.1}};
    with_stages.actions[0].patch = {{"spec", {{"taints", nlohmann::json::array()}}}};
    for (auto& [name, report] : inputs()) {
        files.push_back(temp_file(name + ".json", render_json(report)));
    }
    files.push_back(temp_file("with_stages.json", render_json(with_stages)));
    // Undecided results and a reference node, as the judge and --reference-nodes write them.
    RunReport undecided = load_fixture("run_8_nodes.json");
    undecided.nodes[0].reference = true;
    undecided.nodes[1].verdict = core::Verdict::warn;
    undecided.nodes[1].checks.back().verdict = core::Verdict::warn;
    undecided.nodes[1].checks.back().undecided = core::Undecided::inconclusive;
    undecided.nodes[2].checks.back().verdict = core::Verdict::warn;
    undecided.nodes[2].checks.back().undecided = core::Undecided::incomplete;
    files.push_back(temp_file("undecided.json", render_json(undecided)));
    for (const auto& path : files) {
        EXPECT_EQ(validate_json(path), "") << path;
    }
}

TEST(ReportJsonSchema, CatchesDrift) {
    if (!have_jsonschema()) {
        GTEST_SKIP() << "python3 jsonschema not installed (Debian python3-jsonschema)";
    }
    const auto good = nlohmann::ordered_json::parse(read_text(fixture_path("run_8_nodes.json")));
    std::vector<std::pair<std::string, nlohmann::ordered_json>> broken;
    broken.emplace_back("extra top-level key", good);
    broken.back().second["busbw"] = 1;
    broken.emplace_back("schema_version 2", good);
    broken.back().second["schema_version"] = 2;
    broken.emplace_back("unknown verdict", good);
    broken.back().second["nodes"][0]["verdict"] = "ok";
    broken.emplace_back("extra key in a check", good);
    broken.back().second["nodes"][0]["checks"]["link.netdev"]["busbw"] = 1;
    broken.emplace_back("missing summary", good);
    broken.back().second.erase("summary");
    broken.emplace_back("unknown undecided kind", good);
    broken.back().second["nodes"][0]["checks"]["link.netdev"]["undecided"] = "maybe";
    broken.emplace_back("group busbw as text", good);
    broken.back().second["groups"][0]["busbw_gbps"] = "fast";
    for (const auto& [what, doc] : broken) {
        EXPECT_NE(validate_json(temp_file("broken.json", doc.dump(2))), "") << what;
    }
}

}  // namespace
}  // namespace preflight::outcome
