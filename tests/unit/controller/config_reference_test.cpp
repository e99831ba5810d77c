// `preflight config reference` and `preflight config validate` over the section tables; and
// docs/config.md against the generated reference.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/cli/cli_config.hpp"
#include "core/config_sections.hpp"
#include "outcome/job_impact.hpp"

namespace preflight::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct CliResult {
    std::optional<int> rc;
    std::string out;
    std::string err;
};

// Runs `preflight ARGS...` with only the config commands, over the built-in sections and a small
// catalog.
CliResult run_cli(std::vector<std::string> args) {
    CLI::App app;
    std::ostringstream out;
    std::ostringstream err;
    auto run = add_config_command(
        app, core::config::builtin_sections(),
        [] {
            return core::ParamCatalog{{"link.netdev", {}}, {"collective.gloo_allreduce", {}}};
        },
        &out, &err);
    args.insert(args.begin(), "preflight");
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    app.parse(static_cast<int>(argv.size()), argv.data());
    auto rc = run();
    return {rc, out.str(), err.str()};
}

TEST(ConfigReference, TextListsEverySectionAndKey) {
    const auto text = render_config_text(core::config::builtin_sections());
    EXPECT_THAT(text, HasSubstr("top level  (core)\n"));
    EXPECT_THAT(text, HasSubstr("deadlines  (core)\n"));
    EXPECT_THAT(text, HasSubstr("    connect_s (number, default 30.0, s; > 0, at most 2592000 "
                                "(30 days)): all agents must have authenticated by then\n"));
    EXPECT_THAT(text, HasSubstr("launch.slurm  (slurm)\n"));
    EXPECT_THAT(text, HasSubstr("    gpus_per_node (integer, default \"auto\"; auto or a whole "
                                "number in 0..1024): "));
    EXPECT_THAT(text, HasSubstr("k8s  (k8s)\n"));
    EXPECT_THAT(text, HasSubstr("launch.ssh  (ssh)\n"));
    EXPECT_THAT(text, HasSubstr("    cert (string, required; a readable file): "));
    EXPECT_THAT(text, HasSubstr("  sections: launch.slurm, launch.ssh\n"));
}

TEST(ConfigReference, MarkdownHasATablePerSection) {
    const auto md = render_config_markdown(core::config::builtin_sections());
    EXPECT_THAT(md, HasSubstr("## `ledger.self_history`\n\nOwner: core. "));
    EXPECT_THAT(md, HasSubstr("| `threshold_fraction` | number | `0.9` |  | in (0, 1] | a node "
                              "fails under this fraction of its cohort's median |\n"));
    EXPECT_THAT(md, HasSubstr("| `pod_template` | mapping | `{}` |"));
    EXPECT_THAT(md, HasSubstr("Sections below: `controller.tls`.\n"));
}

TEST(ConfigReference, CommandLine) {
    auto text = run_cli({"config", "reference"});
    EXPECT_EQ(text.rc, 0);
    EXPECT_EQ(text.out, render_config_text(core::config::builtin_sections()));
    auto md = run_cli({"config", "reference", "--markdown"});
    EXPECT_EQ(md.rc, 0);
    EXPECT_EQ(md.out, render_config_markdown(core::config::builtin_sections()));

    CLI::App app;
    auto run = add_config_command(app);
    app.parse(std::string(), false);
    EXPECT_EQ(run(), std::nullopt);  // not parsed: someone else's command
}

class ConfigValidate : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("preflight_config_validate." + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    std::string write(const std::string& name, const std::string& text) {
        auto path = (m_dir / name).string();
        std::ofstream(path) << text;
        return path;
    }
    std::filesystem::path m_dir;
};

TEST_F(ConfigValidate, ValidFileSaysSo) {
    const auto path =
        write("run.yaml", "checks: [link.netdev]\nlaunch:\n  slurm: {step: per-node}\n");
    auto r = run_cli({"config", "validate", path});
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out, path + ": valid\n");
    EXPECT_EQ(r.err, "");
}

TEST_F(ConfigValidate, ErrorNamesFileLineAndColumnAndExitsTwo) {
    const auto path = write("bad.yaml", "checks: [link.netdev]\nk8s:\n  max_retries: 11\n");
    auto r = run_cli({"config", "validate", path});
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, path + ":3:16: 'k8s.max_retries' must be in 0..10\n");

    auto unknown = run_cli({"config", "validate", write("typo.yaml", "checks: [link.pcie]\n")});
    EXPECT_EQ(unknown.rc, 2);
    EXPECT_THAT(unknown.err, HasSubstr(":1:10: unknown check 'link.pcie'"));

    const auto missing = (m_dir / "nope.yaml").string();
    auto gone = run_cli({"config", "validate", missing});
    EXPECT_EQ(gone.rc, 2);
    EXPECT_EQ(gone.err, missing + ": cannot read: No such file or directory\n");
    EXPECT_THAT(gone.out, Not(HasSubstr("valid")));
}

// The job section shows the defaults outcome::JobProfile applies; the two must stay equal.
TEST(ConfigReference, JobDefaultsAreTheJobProfiles) {
    const outcome::JobProfile profile;
    for (const auto& section : core::config::builtin_sections()) {
        if (section.path != "job") {
            continue;
        }
        for (const auto& field : section.fields) {
            const auto& p = field.param;
            if (p.name == "dtype") {
                EXPECT_EQ(p.default_value, profile.dtype);
            } else if (p.name == "nodes") {
                EXPECT_EQ(p.default_value, profile.nodes);
            } else if (p.name == "gpus_per_node") {
                EXPECT_EQ(p.default_value, profile.gpus_per_node);
            } else {
                EXPECT_TRUE(p.default_value.is_null()) << p.name << " is required";
            }
        }
        return;
    }
    FAIL() << "no job section";
}

// --- docs/config.md ---

TEST(ConfigReference, DocsMatchTheTables) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/docs/config.md");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), render_config_markdown(core::config::builtin_sections()))
        << "regenerate it: build/bin/preflight config reference --markdown > docs/config.md";
}

}  // namespace
}  // namespace preflight::controller
