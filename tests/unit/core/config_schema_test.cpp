// The configuration's section tables (core/config_schema.hpp): a section added with one table and
// one registration is read, checked and listed like the built-in ones; the built-in tables are
// well formed (unique paths, a registered parent, a doc for every key, defaults their own rules
// accept, every duration bounded); and the rules' texts.
#include "core/config_schema.hpp"

#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/config_sections.hpp"

namespace preflight::core::config {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

// A wing's settings, kept outside RunConfig the way a test can.
struct ExampleLaunchConfig {
    std::string queue = "default";
    int hosts_per_step = 8;
    double grace_s = 5.0;
    std::string token_file;
    std::vector<std::string> flags;
};

ExampleLaunchConfig g_example;

Section example_section() {
    using E = ExampleLaunchConfig;
    return section<E>(
        "launch.example", "example", "An example launcher's settings.",
        [](RunConfig&) -> E& { return g_example; },
        {
            field("queue", &E::queue, "where steps go", "", not_empty()),
            field("hosts_per_step", &E::hosts_per_step, "hosts in one step", "", whole_in(1, 64)),
            field("grace_s", &E::grace_s, "wait after stop", "s", duration(true)),
            field("token_file", &E::token_file, "a token", "").required(),
            field("flags", &E::flags, "more flags", "", each(one_of({{"fast"}, {"quiet"}}))),
        });
}

// The built-in sections plus the example: the one registration a wing adds.
const std::vector<Section>& with_example() {
    static const std::vector<Section> sections = [] {
        auto all = builtin_sections();
        all.push_back(example_section());
        return all;
    }();
    return sections;
}

const ParamCatalog k_catalog = {{"link.netdev", {}}, {"collective.gloo_allreduce", {}}};

std::string error_of(const std::string& text, const std::vector<Section>& sections) {
    try {
        parse_config(text, "run.yaml", k_catalog, sections);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ConfigSchema, AnAddedSectionIsReadCheckedAndListed) {
    g_example = {};
    parse_config(
        "launch:\n  example:\n    token_file: /t\n    hosts_per_step: 4\n    flags: "
        "[fast]\n",
        "run.yaml", k_catalog, with_example());
    EXPECT_EQ(g_example.hosts_per_step, 4);
    EXPECT_EQ(g_example.token_file, "/t");
    EXPECT_EQ(g_example.queue, "default");
    EXPECT_EQ(g_example.flags, std::vector<std::string>{"fast"});

    const std::string head = "launch:\n  example:\n    token_file: /t\n";
    EXPECT_EQ(error_of("launch:\n  exampel: {}\n", with_example()),
              "run.yaml:2:3: unknown key 'exampel' in 'launch' (allowed: slurm, ssh, example)");
    EXPECT_EQ(error_of(head + "    host: 1\n", with_example()),
              "run.yaml:4:5: unknown key 'host' in 'launch.example' (allowed: queue, "
              "hosts_per_step, grace_s, token_file, flags)");
    EXPECT_EQ(error_of(head + "    hosts_per_step: many\n", with_example()),
              "run.yaml:4:21: 'launch.example.hosts_per_step' must be an integer");
    EXPECT_EQ(error_of(head + "    hosts_per_step: 65\n", with_example()),
              "run.yaml:4:21: 'launch.example.hosts_per_step' must be in 1..64");
    EXPECT_EQ(error_of(head + "    queue: ''\n", with_example()),
              "run.yaml:4:12: 'launch.example.queue' must not be empty");
    EXPECT_EQ(error_of(head + "    grace_s: 1e300\n", with_example()),
              "run.yaml:4:14: 'launch.example.grace_s' must be at most 2592000 (30 days)");
    EXPECT_EQ(error_of(head + "    flags: [quiet, loud]\n", with_example()),
              "run.yaml:4:20: 'launch.example.flags' must be fast or quiet");
    EXPECT_EQ(error_of("launch:\n  example:\n    queue: q\n", with_example()),
              "run.yaml:3:5: 'launch.example.token_file' (a token) is required");
    // Without the registration the key is unknown.
    EXPECT_THAT(error_of(head, builtin_sections()),
                HasSubstr("unknown key 'example' in 'launch' (allowed: slurm, ssh)"));
}

TEST(ConfigSchema, ASectionWithNothingUnderItKeepsItsDefaultsUnlessItHasRequiredKeys) {
    g_example = {};
    EXPECT_EQ(error_of("launch:\n  example: {token_file: /t}\nevaluation:\nledger:\n  "
                       "self_history:\n",
                       with_example()),
              "no error");
    EXPECT_EQ(error_of("launch:\n  example:\n", with_example()),
              "run.yaml:2:3: 'launch.example' has no value");
    EXPECT_EQ(error_of("controller:\n  tls:\n", builtin_sections()),
              "run.yaml:2:3: 'controller.tls' has no value");
    EXPECT_EQ(error_of("job:\n", builtin_sections()), "run.yaml:1:1: 'job' has no value");
    EXPECT_EQ(error_of("evaluation: {floors: }\n", builtin_sections()), "no error");
    EXPECT_EQ(error_of("deadlines: {connect_s: }\n", builtin_sections()),
              "run.yaml:1:13: 'deadlines.connect_s' has no value");
}

TEST(ConfigSchema, DefaultsComeFromTheSettingsTypes) {
    const auto& fields = example_section().fields;
    ASSERT_EQ(fields.size(), 5u);
    EXPECT_EQ(fields[0].param.default_value, "default");
    EXPECT_EQ(fields[1].param.type, ParamType::integer);
    EXPECT_EQ(fields[1].param.default_value, 8);
    EXPECT_EQ(fields[2].param.type, ParamType::number);
    EXPECT_EQ(fields[2].param.unit, "s");
    EXPECT_TRUE(fields[3].param.default_value.is_null()) << "required";
    EXPECT_EQ(fields[4].param.type, ParamType::string_list);
    EXPECT_EQ(fields[4].rule.text, "each fast or quiet");
}

TEST(ConfigSchema, ChildKeys) {
    EXPECT_EQ(child_key("", "launch"), "launch");
    EXPECT_EQ(child_key("launch", "launch.slurm"), "slurm");
    EXPECT_EQ(child_key("", "launch.slurm"), std::nullopt);
    EXPECT_EQ(child_key("launch", "launcher.x"), std::nullopt);
    EXPECT_EQ(child_key("launch", "launch"), std::nullopt);
    EXPECT_EQ(child_key("", ""), std::nullopt);
    EXPECT_EQ(key_path("", "checks"), "checks");
    EXPECT_EQ(key_path("ledger.self_history", "window_days"), "ledger.self_history.window_days");
}

TEST(ConfigSchema, RuleTexts) {
    EXPECT_EQ(in_range(0, 0.9).text, "in [0, 0.9]");
    EXPECT_EQ(above_and_at_most(0, 1).text, "in (0, 1]");
    EXPECT_EQ(at_least(0, "0: none").text, ">= 0 (0: none)");
    EXPECT_EQ(whole_in(0, 65535).text, "in 0..65535");
    EXPECT_EQ(one_of({{"a"}, {"b"}}).text, "a or b");
    EXPECT_EQ(one_of({{"a"}, {"b"}, {"c"}}).text, "one of a, b, c");
    EXPECT_EQ(one_of({{"a", "why"}, {"b"}}).text, "a (why) or b");
    EXPECT_EQ(duration(false).text, "> 0, at most 2592000 (30 days)");
    EXPECT_FALSE(in_range(0, 1).check(json(0.5), "x"));
    EXPECT_EQ(in_range(0, 1).check(json(2), "x")->message, "'x' must be in [0, 1]");
    const auto v = each(one_of({{"a"}, {"b"}})).check(json{"a", "c"}, "x");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->item, 1u);
}

// --- the built-in tables ---

TEST(ConfigSchema, BuiltinSectionsAreWellFormed) {
    const auto& sections = builtin_sections();
    ASSERT_FALSE(sections.empty());
    EXPECT_EQ(sections.front().path, "") << "the top level comes first";
    std::set<std::string> paths;
    for (const auto& s : sections) {
        EXPECT_TRUE(paths.insert(s.path).second) << "duplicate section " << s.path;
        EXPECT_FALSE(s.owner.empty()) << s.path;
        EXPECT_FALSE(s.doc.empty()) << s.path;
        EXPECT_TRUE(s.read) << s.path;
        std::set<std::string> keys;
        for (const auto& f : s.fields) {
            EXPECT_TRUE(keys.insert(f.param.name).second) << s.path << "." << f.param.name;
            EXPECT_FALSE(f.param.help.empty()) << s.path << "." << f.param.name;
        }
        for (const auto& child : sections) {
            if (auto key = child_key(s.path, child.path)) {
                EXPECT_EQ(keys.count(*key), 0u) << child.path << " is also a key of " << s.path;
            }
        }
    }
    for (const auto& s : sections) {
        if (s.path.empty()) {
            continue;
        }
        const auto dot = s.path.rfind('.');
        const std::string parent = dot == std::string::npos ? "" : s.path.substr(0, dot);
        EXPECT_EQ(paths.count(parent), 1u) << s.path << " has no parent section " << parent;
    }
}

// Writing a default out is accepted, so the reference's defaults are values a file may hold.
// The exceptions are text where empty means "not set" and an explicit "" is refused as a slip.
TEST(ConfigSchema, EveryDefaultPassesItsOwnRule) {
    const std::set<std::string> empty_means_unset = {"controller.tls.server_name",
                                                     "launch.slurm.gres", "ledger.url"};
    for (const auto& s : builtin_sections()) {
        for (const auto& f : s.fields) {
            const std::string path = key_path(s.path, f.param.name);
            if (f.param.default_value.is_null() || !f.rule.check ||
                empty_means_unset.count(path) != 0) {
                continue;
            }
            EXPECT_FALSE(f.rule.check(f.param.default_value, path)) << path;
            EXPECT_TRUE(param_type_matches(f.param.type, f.param.default_value)) << path;
        }
    }
}

// Every key in seconds or milliseconds refuses a value that would overflow as milliseconds.
TEST(ConfigSchema, EveryDurationIsBounded) {
    const std::string file = "run.yaml";
    const ReadContext ctx{file, k_catalog};
    int durations = 0;
    for (const auto& s : builtin_sections()) {
        for (const auto& f : s.fields) {
            if (f.param.unit != "s" && f.param.unit != "ms") {
                continue;
            }
            ++durations;
            const std::string path = key_path(s.path, f.param.name);
            const std::string big = f.param.type == ParamType::integer ? "2000000000000" : "1e300";
            const YAML::Node node = YAML::Load(big);
            EXPECT_THROW(read_value(ctx, node, f, path), ConfigError) << path;
        }
    }
    EXPECT_GE(durations, 8);
}

}  // namespace
}  // namespace preflight::core::config
