// `preflight run --dry-run`: the launch plan of each launcher, produced without launching,
// listening or asking a cluster anything, and without a secret in it.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "integrations/registry.hpp"

#include "controller/run/orchestrator.hpp"
#include "core/config.hpp"
#include "core/inventory.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunOptions options_for(const std::string& launcher, const std::string& hostlist) {
    RunOptions options;
    options.config = core::default_config(plugins::param_catalog());
    options.config.controller.advertise = "10.0.0.1";
    options.nodes = core::inventory_from_hostlist(hostlist);
    options.launcher = launcher;
    options.launchers = integrations::launchers(integrations::make_all());
    options.agent_path = "/usr/bin/preflight-agent";
    return options;
}

TEST(DryRun, LocalShowsOneAgentCommandPerNodeAndNoKey) {
    auto options = options_for("local", "n[1-2]");
    options.config.controller.port = 7000;
    const std::string plan = dry_run_preflight(options);
    EXPECT_THAT(plan,
                HasSubstr("/usr/bin/preflight-agent session --controller 10.0.0.1:7000 --node n1"));
    EXPECT_THAT(plan,
                HasSubstr("/usr/bin/preflight-agent session --controller 10.0.0.1:7000 --node n2"));
    EXPECT_THAT(plan, Not(HasSubstr("PREFLIGHT_NODE_KEY=")));
}

TEST(DryRun, AnEphemeralPortIsShownAsPort) {
    const std::string plan = dry_run_preflight(options_for("local", "n1"));
    EXPECT_THAT(plan, HasSubstr("--controller 10.0.0.1:PORT --node n1"));
}

TEST(DryRun, KubernetesShowsTheSecretWithoutItsValueAndTheJob) {
    auto options = options_for("k8s", "gpu[001-003]");
    options.config.k8s.image = "localhost/preflight:0.2.0";
    const std::string plan = dry_run_preflight(options);
    EXPECT_THAT(plan, HasSubstr("kind: Secret"));
    EXPECT_THAT(plan, HasSubstr("PREFLIGHT_RUN_SECRET: <generated per run>"));
    EXPECT_THAT(plan, HasSubstr("kind: Job"));
    EXPECT_THAT(plan, HasSubstr("completions: 3"));
    EXPECT_THAT(plan, HasSubstr("- gpu003"));
}

TEST(DryRun, ConnectWithoutASecretIsAUsageError) {
    auto options = options_for("connect", "n1");
    ::unsetenv("PREFLIGHT_SECRET");
    ::unsetenv("PREFLIGHT_SECRET_FILE");
    EXPECT_THROW((void)dry_run_preflight(options), core::ConfigError);
}

}  // namespace
}  // namespace preflight::controller
