// The renderer table: every format renders a saved report exactly as its own renderer does, and
// write_report_files writes the table's files and nothing else.
#include "outcome/report/renderers.hpp"

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "outcome/report/html.hpp"
#include "outcome/report/json.hpp"
#include "outcome/report/junit.hpp"
#include "outcome/report/markdown.hpp"
#include "outcome/report/prometheus.hpp"
#include "outcome/report/terminal.hpp"
#include "tests/unit/outcome/report_fixtures.hpp"

namespace preflight::outcome {
namespace {

using testing::load_fixture;
using testing::read_text;

// Written by hand from the formats `preflight report --format` documents.
std::string expected_render(std::string_view format, const RunReport& r) {
    if (format == "json") {
        return render_json(r);
    }
    if (format == "text") {
        return render_terminal(r, false);
    }
    if (format == "html") {
        return render_html(r);
    }
    if (format == "md") {
        return render_markdown(r);
    }
    if (format == "junit") {
        return render_junit(r);
    }
    if (format == "prom") {
        return render_prometheus(r);
    }
    return "unexpected format " + std::string(format);
}

TEST(Renderers, TableHoldsEveryFormatOnce) {
    std::set<std::string> formats;
    std::set<std::string> files;
    for (const auto& r : renderers()) {
        EXPECT_TRUE(formats.insert(std::string(r.format)).second) << r.format;
        EXPECT_TRUE(files.insert(std::string(r.file_name)).second) << r.file_name;
        ASSERT_NE(r.render, nullptr) << r.format;
    }
    EXPECT_EQ(formats, (std::set<std::string>{"json", "text", "html", "md", "junit", "prom"}));
    EXPECT_EQ(files, (std::set<std::string>{"report.json", "report.txt", "report.html", "report.md",
                                            "report.junit.xml", "report.prom"}));
    EXPECT_EQ(renderers().front().format, "json");
    EXPECT_EQ(renderer_names(", "), "json, text, html, md, junit, prom");
}

TEST(Renderers, EveryFormatRendersAFixtureReport) {
    const RunReport report = load_fixture("run_8_nodes.json");
    for (const auto& r : renderers()) {
        const std::string text = r.render(report);
        EXPECT_FALSE(text.empty()) << r.format;
        EXPECT_EQ(text, expected_render(r.format, report)) << r.format;
        EXPECT_NE(text.find("h3"), std::string::npos) << r.format << " names no node";
    }
}

TEST(Renderers, FindByName) {
    const Renderer* md = find_renderer("md");
    ASSERT_NE(md, nullptr);
    EXPECT_EQ(md->file_name, "report.md");
    EXPECT_EQ(find_renderer("pdf"), nullptr);
    EXPECT_EQ(find_renderer(""), nullptr);
}

TEST(Renderers, WriteReportFilesWritesExactlyTheTable) {
    const RunReport report = load_fixture("run_8_nodes.json");
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight-renderers-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(write_report_files(report, dir.string(), "").ok());
    std::set<std::string> written;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        written.insert(e.path().filename().string());
    }
    std::set<std::string> table;
    for (const auto& r : renderers()) {
        table.insert(std::string(r.file_name));
        EXPECT_EQ(read_text((dir / r.file_name).string()), r.render(report)) << r.file_name;
    }
    EXPECT_EQ(written, table);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace preflight::outcome
