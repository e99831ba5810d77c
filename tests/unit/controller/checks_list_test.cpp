// `preflight checks list` over a composed table (the built-in checks plus the example check of
// tests/unit/plugins/example_check.hpp), in text and JSON and through the command line; and the
// README's check reference against the built-in table.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/cli/cli_checks.hpp"
#include "tests/unit/plugins/example_check.hpp"

namespace preflight::controller {
namespace {

using ::testing::HasSubstr;

const nlohmann::ordered_json* find_check(const nlohmann::ordered_json& doc,
                                         const std::string& name) {
    for (const auto& check : doc.at("checks")) {
        if (check.at("name") == name) {
            return &check;
        }
    }
    return nullptr;
}

TEST(ChecksList, TextShowsTheAddedCheckWithItsParams) {
    const auto text = render_checks_text(plugins::example::test_checks());
    EXPECT_THAT(text, HasSubstr("example.echo  (example, node-local)\n"));
    EXPECT_THAT(text, HasSubstr("  says its message back\n"));
    EXPECT_THAT(text, HasSubstr("  judged: absolute, on the node; reports length (characters)\n"));
    EXPECT_THAT(text, HasSubstr("  params:\n"
                                "    message (string, default \"hello\"): what to say\n"
                                "    repeat (integer, default 2, times): how many times to say "
                                "it\n"));
    EXPECT_THAT(text, HasSubstr("link.netdev  (link, node-local)\n"));
    EXPECT_THAT(render_checks_text(plugins::builtin_checks()),
                ::testing::Not(HasSubstr("example.echo")));
}

TEST(ChecksList, JsonCarriesTheSpec) {
    const auto doc = checks_json(plugins::example::test_checks());
    ASSERT_EQ(doc.at("checks").size(), plugins::example::test_checks().size());
    const auto* echo = find_check(doc, "example.echo");
    ASSERT_NE(echo, nullptr);
    EXPECT_EQ(echo->at("family"), "example");
    EXPECT_EQ(echo->at("phase"), "node-local");
    EXPECT_EQ(echo->at("judged"), "absolute");
    EXPECT_EQ(echo->at("metric"),
              (nlohmann::ordered_json{{"name", "length"}, {"unit", "characters"}}));
    EXPECT_EQ(echo->at("brackets_collectives"), false);
    ASSERT_EQ(echo->at("params").size(), 2u);
    EXPECT_EQ(echo->at("params")[1], (nlohmann::ordered_json{{"name", "repeat"},
                                                             {"type", "integer"},
                                                             {"default", 2},
                                                             {"unit", "times"},
                                                             {"doc", "how many times to say it"}}));
    const auto* pause = find_check(doc, "link.pause");
    ASSERT_NE(pause, nullptr);
    EXPECT_EQ(pause->at("brackets_collectives"), true);
    EXPECT_EQ(pause->at("metric"), nullptr);
}

// Runs `preflight checks list ARGS...` over the example table; returns {exit code, stdout}.
std::pair<std::optional<int>, std::string> run_cli(std::vector<std::string> args) {
    CLI::App app;
    std::ostringstream out;
    auto run = add_checks_command(app, plugins::example::test_checks(), &out);
    args.insert(args.begin(), "preflight");
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    app.parse(static_cast<int>(argv.size()), argv.data());
    auto rc = run();
    return {rc, out.str()};
}

TEST(ChecksList, CommandLine) {
    auto [rc, text] = run_cli({"checks", "list"});
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(text, render_checks_text(plugins::example::test_checks()));

    auto [json_rc, json] = run_cli({"checks", "list", "--json"});
    EXPECT_EQ(json_rc, 0);
    const auto doc = nlohmann::ordered_json::parse(json);
    const auto* echo = find_check(doc, "example.echo");
    ASSERT_NE(echo, nullptr);
    EXPECT_EQ(echo->at("params")[0].at("name"), "message");

    auto [md_rc, md] = run_cli({"checks", "list", "--markdown"});
    EXPECT_EQ(md_rc, 0);
    EXPECT_THAT(md, HasSubstr("### `example.echo`\n"));
    EXPECT_THAT(md, HasSubstr("| `repeat` | integer | `2` | times | how many times to say it |\n"));

    CLI::App app;
    auto run = add_checks_command(app, plugins::example::test_checks());
    app.parse(std::string(), false);
    EXPECT_EQ(run(), std::nullopt);  // not parsed: someone else's command
}

// --- the README's check reference ---

constexpr std::string_view k_begin = "<!-- checks list --markdown: begin -->\n";
constexpr std::string_view k_end = "<!-- checks list --markdown: end -->";

std::string readme_reference() {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/README.md");
    std::stringstream text;
    text << in.rdbuf();
    const auto all = text.str();
    const auto begin = all.find(k_begin);
    const auto end = all.find(k_end);
    if (begin == std::string::npos || end == std::string::npos || end < begin) {
        return {};
    }
    return all.substr(begin + k_begin.size(), end - begin - k_begin.size());
}

// check -> its parameters, from "### `name`" headings and "| `param` |" rows.
std::map<std::string, std::set<std::string>> parse_reference(const std::string& markdown) {
    std::map<std::string, std::set<std::string>> checks;
    std::istringstream lines(markdown);
    std::string line;
    std::string current;
    auto quoted = [](const std::string& s, std::size_t from) {
        const auto a = s.find('`', from);
        const auto b = a == std::string::npos ? a : s.find('`', a + 1);
        return b == std::string::npos ? std::string() : s.substr(a + 1, b - a - 1);
    };
    while (std::getline(lines, line)) {
        if (line.rfind("### ", 0) == 0) {
            current = quoted(line, 0);
            checks[current];
        } else if (line.rfind("| `", 0) == 0 && !current.empty()) {
            checks[current].insert(quoted(line, 0));
        }
    }
    return checks;
}

#if PREFLIGHT_WITH_GLOO && PREFLIGHT_WITH_CUDA && PREFLIGHT_WITH_NCCL && PREFLIGHT_WITH_MPI
constexpr bool k_full_build = true;
#else
constexpr bool k_full_build = false;
#endif

TEST(ChecksReference, ReadmeMatchesTheTable) {
    const auto reference = readme_reference();
    ASSERT_FALSE(reference.empty())
        << "README.md has no '" << k_begin << "' ... '" << k_end << "' block";
    const auto documented = parse_reference(reference);
    std::set<std::string> in_table;
    for (const auto& entry : plugins::builtin_checks()) {
        const auto& spec = entry.spec;
        in_table.insert(spec.name);
        auto it = documented.find(spec.name);
        ASSERT_NE(it, documented.end()) << spec.name << " is missing from README.md";
        std::set<std::string> params;
        for (const auto& param : spec.params) {
            params.insert(param.name);
        }
        EXPECT_EQ(it->second, params) << spec.name << ": README.md's parameters differ";
    }
    for (const auto& [name, params] : documented) {
        // A build without an optional dependency lacks that dependency's checks; a full build
        // has every one the README lists.
        if (k_full_build) {
            EXPECT_EQ(in_table.count(name), 1u)
                << "README.md lists " << name << ", which the table does not have";
        }
    }
    if (k_full_build) {
        EXPECT_EQ(reference, render_checks_markdown(plugins::builtin_checks()))
            << "regenerate the block with `build/bin/preflight checks list --markdown`";
    }
}

}  // namespace
}  // namespace preflight::controller
