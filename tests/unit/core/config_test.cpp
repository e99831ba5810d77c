#include "core/config.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ParamCatalog catalog() {
    return {
        {"collective.gloo_allreduce",
         {ParamSpec{"bytes", ParamType::integer, 67108864, "message size"},
          ParamSpec{"iters", ParamType::integer, 5, "timed iterations"},
          ParamSpec{"transport", ParamType::string, "tcp", "tcp or ibverbs"}}},
        {"link.netdev",
         {ParamSpec{"min_speed_mbps", ParamType::number, 0, "slowest acceptable speed"},
          ParamSpec{"interfaces", ParamType::string_list, json::array(), "names to check"},
          ParamSpec{"require_carrier", ParamType::boolean, true, "fail without carrier"}}},
        {"link.pcie", {}},
    };
}

RunConfig parse(const std::string& text) {
    return parse_config(text, "run.yaml", catalog());
}

// The ConfigError message parse() throws for text.
std::string error_of(const std::string& text) {
    try {
        parse(text);
    } catch (const ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return {};
}

void expect_defaults(const RunConfig& c) {
    EXPECT_DOUBLE_EQ(c.evaluation.threshold_fraction, 0.90);
    EXPECT_EQ(c.evaluation.min_cohort, 3);
    EXPECT_EQ(c.evaluation.cohort_label, "sku");
    EXPECT_TRUE(c.evaluation.floors.empty());
    EXPECT_THAT(c.actions.targets, ElementsAre("slurm"));
    EXPECT_DOUBLE_EQ(c.actions.max_action_fraction, 0.10);
    EXPECT_EQ(c.actions.min_actions, 1);
    EXPECT_EQ(c.actions.scontrol, "scontrol");
    EXPECT_DOUBLE_EQ(c.deadlines.connect_s, 30.0);
    EXPECT_DOUBLE_EQ(c.deadlines.heartbeat_s, 2.0);
    EXPECT_DOUBLE_EQ(c.deadlines.step_slack_s, 15.0);
    EXPECT_EQ(c.controller.listen, "0.0.0.0");
    EXPECT_EQ(c.controller.port, 0);
    EXPECT_EQ(c.controller.advertise, "");
    EXPECT_THAT(c.checks, ElementsAre("link.netdev", "collective.gloo_allreduce"));
    EXPECT_TRUE(c.check_params.empty());
}

TEST(Config, DefaultConfig) {
    auto c = default_config(catalog());
    EXPECT_EQ(c.source, "<defaults>");
    expect_defaults(c);
}

TEST(Config, EmptyDocumentsAreDefaults) {
    for (std::string text : {"", "# only a comment\n", "---\n", "evaluation:\nactions:\n"}) {
        auto c = parse(text);
        EXPECT_EQ(c.source, "run.yaml");
        expect_defaults(c);
    }
}

TEST(Config, DefaultsMustBeInTheCatalog) {
    ParamCatalog no_gloo = {{"link.netdev", {}}};
    EXPECT_THROW(default_config(no_gloo), ConfigError);
    try {
        parse_config("", "run.yaml", no_gloo);
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_THAT(e.what(), StartsWith("run.yaml: default check 'collective.gloo_allreduce'"));
    }
    // Naming the checks explicitly is fine.
    EXPECT_NO_THROW(parse_config("checks: [link.netdev]\n", "run.yaml", no_gloo));
}

TEST(Config, FullDocument) {
    auto c = parse(R"(# a complete config
evaluation:
  threshold_fraction: 0.85
  min_cohort: 4
  cohort_label: gpu-sku
  floors:
    collective.gloo_allreduce: {busbw_gbps: 0.04}
    link.netdev:
      speed_mbps: 100000
actions:
  targets: [slurm, k8s]
  max_action_fraction: 0.25
  min_actions: 0
  scontrol: /usr/bin/scontrol
deadlines: {connect_s: 10, heartbeat_s: 0.5, step_slack_s: 0}
controller:
  listen: 10.0.0.1
  port: 7000
  advertise: head.example
checks:
  - collective.gloo_allreduce
  - link.netdev
params:
  collective.gloo_allreduce: {bytes: 16777216, iters: 3}
  link.netdev:
    interfaces: [eth0, "eth1"]
    min_speed_mbps: 100
    require_carrier: false
  link.pcie:
)");
    EXPECT_DOUBLE_EQ(c.evaluation.threshold_fraction, 0.85);
    EXPECT_EQ(c.evaluation.min_cohort, 4);
    EXPECT_EQ(c.evaluation.cohort_label, "gpu-sku");
    EXPECT_DOUBLE_EQ(c.evaluation.floors.at("collective.gloo_allreduce").at("busbw_gbps"), 0.04);
    EXPECT_DOUBLE_EQ(c.evaluation.floors.at("link.netdev").at("speed_mbps"), 100000.0);
    EXPECT_THAT(c.actions.targets, ElementsAre("slurm", "k8s"));
    EXPECT_DOUBLE_EQ(c.actions.max_action_fraction, 0.25);
    EXPECT_EQ(c.actions.min_actions, 0);
    EXPECT_EQ(c.actions.scontrol, "/usr/bin/scontrol");
    EXPECT_DOUBLE_EQ(c.deadlines.connect_s, 10.0);
    EXPECT_DOUBLE_EQ(c.deadlines.heartbeat_s, 0.5);
    EXPECT_DOUBLE_EQ(c.deadlines.step_slack_s, 0.0);
    EXPECT_EQ(c.controller.listen, "10.0.0.1");
    EXPECT_EQ(c.controller.port, 7000);
    EXPECT_EQ(c.controller.advertise, "head.example");
    EXPECT_THAT(c.checks, ElementsAre("collective.gloo_allreduce", "link.netdev"));
    // Only what was given; defaults are applied by resolve_params later.
    EXPECT_EQ(c.check_params.at("collective.gloo_allreduce"),
              (json{{"bytes", 16777216}, {"iters", 3}}));
    EXPECT_EQ(c.check_params.at("link.netdev"), (json{{"interfaces", {"eth0", "eth1"}},
                                                      {"min_speed_mbps", 100},
                                                      {"require_carrier", false}}));
    EXPECT_EQ(c.check_params.at("link.pcie"), json::object());
}

TEST(Config, UnknownKeysAtEveryDepth) {
    EXPECT_EQ(error_of("evaluation: {}\nevalution: {}\n"),
              "run.yaml:2:1: unknown key 'evalution' at top level (allowed: checks, params, "
              "evaluation, actions, deadlines, controller, job, k8s, launch, ledger)");
    EXPECT_EQ(error_of("evaluation:\n  threshold: 0.9\n"),
              "run.yaml:2:3: unknown key 'threshold' in 'evaluation' (allowed: "
              "threshold_fraction, min_cohort, max_relative_mad, cohort_label, floors, "
              "topology_file, "
              "topology_label)");
    EXPECT_EQ(error_of("actions: {targets: [slurm], dry_run: true}\n"),
              "run.yaml:1:29: unknown key 'dry_run' in 'actions' (allowed: targets, "
              "max_action_fraction, min_actions, max_actions, scontrol)");
    EXPECT_EQ(error_of("deadlines:\n  connect_s: 1\n  timeout_s: 2\n"),
              "run.yaml:3:3: unknown key 'timeout_s' in 'deadlines' (allowed: connect_s, "
              "heartbeat_s, step_slack_s)");
    EXPECT_EQ(error_of("controller:\n    prot: 80\n"),
              "run.yaml:2:5: unknown key 'prot' in 'controller' (allowed: listen, port, "
              "advertise, tls)");
    // A typo in a check's parameters, two levels down.
    EXPECT_EQ(error_of("params:\n  collective.gloo_allreduce:\n    bytes: 1\n    iter: 3\n"),
              "run.yaml:4:5: unknown parameter 'iter' for check 'collective.gloo_allreduce' "
              "(declared: bytes, iters, transport)");
    EXPECT_EQ(error_of("params:\n  link.pcie: {x: 1}\n"),
              "run.yaml:2:15: unknown parameter 'x' for check 'link.pcie' (declared: none)");
}

TEST(Config, WrongTypes) {
    EXPECT_EQ(error_of("evaluation:\n  threshold_fraction: high\n"),
              "run.yaml:2:23: 'evaluation.threshold_fraction' must be a number");
    EXPECT_EQ(error_of("evaluation:\n  threshold_fraction: \"0.9\"\n"),
              "run.yaml:2:23: 'evaluation.threshold_fraction' must be a number");
    EXPECT_EQ(error_of("evaluation: {min_cohort: 2.5}\n"),
              "run.yaml:1:26: 'evaluation.min_cohort' must be an integer");
    EXPECT_EQ(error_of("evaluation: {cohort_label: [a]}\n"),
              "run.yaml:1:28: 'evaluation.cohort_label' must be a string");
    EXPECT_EQ(error_of("evaluation: {floors: {link.netdev: {speed_mbps: fast}}}\n"),
              "run.yaml:1:49: 'evaluation.floors.link.netdev.speed_mbps' must be a number");
    EXPECT_EQ(error_of("evaluation: {floors: [1]}\n"),
              "run.yaml:1:22: 'evaluation.floors' must be a map");
    EXPECT_EQ(error_of("actions: {targets: slurm}\n"),
              "run.yaml:1:20: 'actions.targets' must be a list of strings");
    EXPECT_EQ(error_of("actions:\n  min_actions: true\n"),
              "run.yaml:2:16: 'actions.min_actions' must be an integer");
    EXPECT_EQ(error_of("deadlines: {heartbeat_s: [1]}\n"),
              "run.yaml:1:26: 'deadlines.heartbeat_s' must be a number");
    EXPECT_EQ(error_of("controller: {port: \"80\"}\n"),
              "run.yaml:1:20: 'controller.port' must be an integer");
    EXPECT_EQ(error_of("evaluation: 3\n"), "run.yaml:1:13: 'evaluation' must be a map");
    EXPECT_EQ(error_of("- a\n- b\n"), "run.yaml:1:1: the document must be a map");
    EXPECT_EQ(error_of("checks: link.netdev\n"),
              "run.yaml:1:9: 'checks' must be a list of check names");
    EXPECT_EQ(error_of("checks:\n"), "run.yaml:1:1: 'checks' has no value");
    EXPECT_EQ(error_of("deadlines:\n  connect_s:\n\n# comment\n"),
              "run.yaml:2:3: 'deadlines.connect_s' has no value");
    // Parameter type errors point at the parameter's key.
    EXPECT_EQ(error_of("params:\n  collective.gloo_allreduce:\n    bytes: 16M\n"),
              "run.yaml:3:5: 'params.collective.gloo_allreduce.bytes' must be an integer");
    EXPECT_EQ(error_of("params:\n  link.netdev: {interfaces: eth0}\n"),
              "run.yaml:2:17: 'params.link.netdev.interfaces' must be a list of strings");
    EXPECT_EQ(error_of("params:\n  link.netdev: {require_carrier: 1}\n"),
              "run.yaml:2:17: 'params.link.netdev.require_carrier' must be a boolean");
    EXPECT_EQ(error_of("params:\n  link.netdev: {min_speed_mbps: \"1\"}\n"),
              "run.yaml:2:17: 'params.link.netdev.min_speed_mbps' must be a number");
    EXPECT_EQ(error_of("params:\n  link.netdev: 5\n"),
              "run.yaml:2:16: 'params.link.netdev' must be a map");
}

TEST(Config, NumbersWhereIntegersOrNumbersExpected) {
    // An integer is a fine number; a float is not an integer.
    auto c =
        parse("evaluation: {threshold_fraction: 1}\nparams: {link.netdev: {min_speed_mbps: 5}}\n");
    EXPECT_DOUBLE_EQ(c.evaluation.threshold_fraction, 1.0);
    EXPECT_EQ(c.check_params.at("link.netdev").at("min_speed_mbps"), 5);
    EXPECT_EQ(error_of("params: {collective.gloo_allreduce: {iters: 3.0}}\n"),
              "run.yaml:1:38: 'params.collective.gloo_allreduce.iters' must be an integer");
}

TEST(Config, RangeChecks) {
    EXPECT_EQ(error_of("evaluation: {threshold_fraction: 0}\n"),
              "run.yaml:1:34: 'evaluation.threshold_fraction' must be in (0, 1]");
    EXPECT_EQ(error_of("evaluation: {threshold_fraction: 1.01}\n"),
              "run.yaml:1:34: 'evaluation.threshold_fraction' must be in (0, 1]");
    EXPECT_EQ(error_of("evaluation: {threshold_fraction: .nan}\n"),
              "run.yaml:1:34: 'evaluation.threshold_fraction' must be a finite number");
    EXPECT_NO_THROW(parse("evaluation: {threshold_fraction: 1.0}\n"));
    EXPECT_EQ(error_of("evaluation: {min_cohort: 0}\n"),
              "run.yaml:1:26: 'evaluation.min_cohort' must be >= 1");
    EXPECT_EQ(error_of("actions: {max_action_fraction: -0.1}\n"),
              "run.yaml:1:32: 'actions.max_action_fraction' must be in [0, 1]");
    EXPECT_EQ(error_of("actions: {max_action_fraction: 1.5}\n"),
              "run.yaml:1:32: 'actions.max_action_fraction' must be in [0, 1]");
    EXPECT_NO_THROW(parse("actions: {max_action_fraction: 0}\n"));
    EXPECT_NO_THROW(parse("actions: {max_action_fraction: 1}\n"));
    EXPECT_EQ(error_of("actions: {min_actions: -1}\n"),
              "run.yaml:1:24: 'actions.min_actions' must be >= 0");
    EXPECT_EQ(error_of("actions:\n  targets:\n    - slurm\n    - lsf\n"),
              "run.yaml:4:7: unknown target 'lsf' in 'actions.targets' (allowed: slurm, k8s)");
    EXPECT_EQ(error_of("deadlines: {heartbeat_s: 0}\n"),
              "run.yaml:1:26: 'deadlines.heartbeat_s' must be > 0");
    EXPECT_EQ(error_of("deadlines: {connect_s: -5}\n"),
              "run.yaml:1:24: 'deadlines.connect_s' must be > 0");
    EXPECT_EQ(error_of("deadlines: {step_slack_s: -1}\n"),
              "run.yaml:1:27: 'deadlines.step_slack_s' must be >= 0");
    EXPECT_EQ(error_of("controller: {port: 65536}\n"),
              "run.yaml:1:20: 'controller.port' must be in 0..65535");
    EXPECT_EQ(error_of("controller: {port: -1}\n"),
              "run.yaml:1:20: 'controller.port' must be in 0..65535");
    EXPECT_EQ(parse("controller: {port: 65535}\n").controller.port, 65535);
    EXPECT_EQ(error_of("controller: {listen: 0.0.0.300}\n"),
              "run.yaml:1:22: 'controller.listen' must be an IPv4 or IPv6 address");
    EXPECT_EQ(parse("controller: {listen: \"::\"}\n").controller.listen, "::");
}

TEST(Config, DurationsBeyondThirtyDaysOrNotFiniteAreRejectedWithTheirPosition) {
    // Each of these became milliseconds in a cast that overflowed (undefined behaviour).
    EXPECT_EQ(error_of("deadlines: {connect_s: 1e300}\n"),
              "run.yaml:1:24: 'deadlines.connect_s' must be at most 2592000 (30 days)");
    EXPECT_EQ(error_of("deadlines: {heartbeat_s: 2592001}\n"),
              "run.yaml:1:26: 'deadlines.heartbeat_s' must be at most 2592000 (30 days)");
    EXPECT_EQ(error_of("deadlines: {step_slack_s: .inf}\n"),
              "run.yaml:1:27: 'deadlines.step_slack_s' must be a finite number");
    EXPECT_EQ(error_of("deadlines: {connect_s: .nan}\n"),
              "run.yaml:1:24: 'deadlines.connect_s' must be a finite number");
    EXPECT_EQ(error_of("k8s: {request_timeout_s: 1e300}\n"),
              "run.yaml:1:26: 'k8s.request_timeout_s' must be at most 2592000 (30 days)");
    EXPECT_DOUBLE_EQ(parse("deadlines: {connect_s: 2592000}\n").deadlines.connect_s, 2592000.0);
}

TEST(Config, CheckParametersOutOfRangeAreRejectedWithTheirPosition) {
    ParamCatalog timed = {{"exec.sleepy",
                           {ParamSpec{"timeout_s", ParamType::number, 60.0, "deadline", "s"},
                            ParamSpec{"sample_ms", ParamType::integer, 200, "window", "ms"}}}};
    auto error = [&](const std::string& text) -> std::string {
        try {
            parse_config(text, "run.yaml", timed);
        } catch (const ConfigError& e) {
            return e.what();
        }
        ADD_FAILURE() << "no ConfigError for:\n" << text;
        return {};
    };
    const std::string head = "checks: [exec.sleepy]\nparams:\n  exec.sleepy:\n";
    EXPECT_EQ(error(head + "    timeout_s: 1e300\n"),
              "run.yaml:4:16: 'params.exec.sleepy.timeout_s': parameter 'timeout_s' must be a "
              "duration in [0, 2592000] s, got 1e+300");
    EXPECT_EQ(error(head + "    timeout_s: -1\n"),
              "run.yaml:4:16: 'params.exec.sleepy.timeout_s': parameter 'timeout_s' must be a "
              "duration in [0, 2592000] s, got -1");
    EXPECT_EQ(error(head + "    timeout_s: .nan\n"),
              "run.yaml:4:16: 'params.exec.sleepy.timeout_s': parameter 'timeout_s' must be a "
              "finite number");
    EXPECT_THAT(error(head + "    sample_ms: 9223372036854775807\n"),
                HasSubstr("run.yaml:4:16: 'params.exec.sleepy.sample_ms': parameter 'sample_ms' "
                          "must be a duration"));
    EXPECT_NO_THROW(parse_config(head + "    timeout_s: 3600\n", "run.yaml", timed));
}

TEST(Config, UnknownChecks) {
    const std::string known = "(known: collective.gloo_allreduce, link.netdev, link.pcie)";
    EXPECT_EQ(error_of("checks:\n  - link.netdev\n  - link.netdve\n"),
              "run.yaml:3:5: unknown check 'link.netdve' " + known);
    EXPECT_EQ(error_of("params:\n  gloo: {bytes: 1}\n"),
              "run.yaml:2:3: unknown check 'gloo' " + known);
    EXPECT_EQ(error_of("evaluation:\n  floors:\n    nccl: {busbw_gbps: 1}\n"),
              "run.yaml:3:5: unknown check 'nccl' " + known);
    EXPECT_EQ(error_of("checks: [link.netdev, link.netdev]\n"),
              "run.yaml:1:23: duplicate check 'link.netdev' in 'checks'");
    EXPECT_EQ(error_of("checks: []\n"), "run.yaml:1:9: 'checks' must name at least one check");
}

TEST(Config, DuplicateKeys) {
    EXPECT_EQ(error_of("evaluation:\n  min_cohort: 2\n  min_cohort: 5\n"),
              "run.yaml:3:3: duplicate key 'min_cohort' in 'evaluation'");
    EXPECT_EQ(error_of("checks: [link.netdev]\nchecks: [link.pcie]\n"),
              "run.yaml:2:1: duplicate key 'checks' at top level");
}

TEST(Config, YamlSyntaxErrorHasPosition) {
    EXPECT_THAT(error_of("evaluation:\n  min_cohort: 3\n checks: [a\n"), StartsWith("run.yaml:3:"));
    EXPECT_THAT(error_of("checks: [link.netdev\n"), StartsWith("run.yaml:2:1: YAML syntax error"));
    EXPECT_THAT(error_of("a: b: c\n"), StartsWith("run.yaml:1:5: YAML syntax error"));
}

class ConfigFile : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("preflight_config_test." + std::to_string(::getpid()));
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

TEST_F(ConfigFile, LoadsAndNamesTheFile) {
    auto path = write("run.yaml", "checks: [link.pcie]\n");
    auto c = load_config(path, catalog());
    EXPECT_EQ(c.source, path);
    EXPECT_THAT(c.checks, ElementsAre("link.pcie"));
    auto bad = write("bad.yaml", "\n\nbogus: 1\n");
    try {
        load_config(bad, catalog());
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_THAT(e.what(), StartsWith(bad + ":3:1: unknown key 'bogus'"));
    }
}

TEST_F(ConfigFile, MissingOrUnreadableFile) {
    auto missing = (m_dir / "nope.yaml").string();
    try {
        load_config(missing, catalog());
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), missing + ": cannot read: No such file or directory");
    }
    try {
        load_config(m_dir.string(), catalog());
        FAIL() << "expected ConfigError";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), m_dir.string() + ": cannot read: Is a directory");
    }
}

TEST(ConfigJob, ParsesAJobProfileForTheImpactEstimate) {
    auto cfg = parse_config(
        "job: {params: 7e9, dtype: bf16, nodes: 64, gpus_per_node: 8, "
        "compute_ms: 150}\n",
        "job.yaml", catalog());
    ASSERT_TRUE(cfg.job.is_object());
    EXPECT_DOUBLE_EQ(cfg.job.at("params").get<double>(), 7e9);
    EXPECT_EQ(cfg.job.at("dtype"), "bf16");
    EXPECT_EQ(cfg.job.at("nodes"), 64);
    EXPECT_TRUE(parse_config("", "empty.yaml", catalog()).job.is_null());
}

TEST(ConfigJob, RejectsAnIncompleteOrWrongJobWithItsPosition) {
    auto message = [](const std::string& text) {
        try {
            parse_config(text, "job.yaml", catalog());
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message("job:\n  compute_ms: 150\n"),
              "job.yaml:2:3: 'job.params' (model parameters, e.g. 7e9) is required");
    EXPECT_EQ(message("job:\n  params: 7e9\n  compute_ms: 150\n  dtype: int4\n"),
              "job.yaml:4:10: 'job.dtype' must be one of fp32, bf16, fp16, fp8");
    EXPECT_NE(message("job:\n  params: 7e9\n  compute_ms: 150\n  gpus: 8\n")
                  .find("job.yaml:4:3: unknown key 'gpus'"),
              std::string::npos);
}

TEST(ConfigTls, NeedsReadableCertKeyAndCaAndNamesTheKey) {
    // Any readable file stands in here; the PEM contents are checked at startup (tls_session_test).
    const std::string f = std::string(PREFLIGHT_SOURCE_DIR) + "/README.md";
    auto c = parse("controller:\n  tls: {cert: " + f + ", key: " + f + ", ca: " + f +
                   ", server_name: ctl.example}\n");
    EXPECT_TRUE(c.controller.tls.enabled());
    EXPECT_EQ(c.controller.tls.ca, f);
    EXPECT_EQ(c.controller.tls.server_name, "ctl.example");
    EXPECT_FALSE(parse("controller: {port: 1}\n").controller.tls.enabled());

    EXPECT_EQ(error_of("controller:\n  tls: {cert: " + f + ", key: " + f + "}\n"),
              "run.yaml:2:8: 'controller.tls.ca' (PEM CA the agents verify the controller "
              "against; the same path on the agents) is required");
    EXPECT_EQ(
        error_of("controller:\n  tls: {cert: /nonexistent/c.pem, key: " + f + ", ca: " + f + "}\n"),
        "run.yaml:2:15: 'controller.tls.cert': cannot read '/nonexistent/c.pem': No such "
        "file or directory");
    const std::string unknown = error_of("controller:\n  tls: {cert: " + f + ", key: " + f +
                                         ", ca: " + f + ", insecure: true}\n");
    EXPECT_EQ(unknown.rfind("run.yaml:2:", 0), 0u) << unknown;
    EXPECT_NE(unknown.find("unknown key 'insecure' in 'controller.tls'"), std::string::npos)
        << unknown;
}

}  // namespace
}  // namespace preflight::core

namespace preflight::core {
namespace {

TEST(ConfigLedger, ReadsTheSectionAndNamesEachBadValueWhereItIs) {
    const auto cfg = parse(
        "ledger:\n  url: postgresql://preflight@db/ledger\n  kind: certify\n"
        "  self_history: {drop_fraction: 0.2, window_days: 7, min_samples: 4, max_samples: 8}\n");
    EXPECT_EQ(cfg.ledger.url, "postgresql://preflight@db/ledger");
    EXPECT_EQ(cfg.ledger.kind, "certify");
    EXPECT_DOUBLE_EQ(cfg.ledger.self_history.drop_fraction, 0.2);
    EXPECT_EQ(cfg.ledger.self_history.min_samples, 4);
    EXPECT_EQ(cfg.ledger.self_history.max_samples, 8);
    const auto error = error_of;
    EXPECT_EQ(error("ledger:\n  kind: audit\n"),
              "run.yaml:2:9: 'ledger.kind' must be gate or certify");
    EXPECT_EQ(error("ledger:\n  self_history: {drop_fraction: 2}\n"),
              "run.yaml:2:33: 'ledger.self_history.drop_fraction' must be in [0, 0.9]");
    EXPECT_EQ(error("ledger:\n  self_history: {min_samples: 5, max_samples: 2}\n"),
              "run.yaml:2:17: 'ledger.self_history.max_samples' must be at least min_samples");
    EXPECT_NE(error("ledger:\n  urls: x\n").find("unknown key 'urls' in 'ledger'"),
              std::string::npos);
}

}  // namespace
}  // namespace preflight::core
