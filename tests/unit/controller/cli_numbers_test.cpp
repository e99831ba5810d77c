// Numbers on the command lines of preflight and preflight-agent: NaN, infinities and values whose
// milliseconds would overflow are refused with the option named, before anything runs.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include "agent/app/cli.hpp"
#include "agent/standalone.hpp"
#include "controller/commands/commands.hpp"
#include "core/checked_number.hpp"

namespace preflight {
namespace {

using ::testing::HasSubstr;

TEST(CliNumbers, FiniteNumberRefusesNanInfinityAndOutOfRange) {
    for (const char* bad : {"nan", "inf", "-inf", "-1", "1e300", "2592001", "30s", ""}) {
        CLI::App app;
        double value = 0;
        app.add_option("--immediate", value)
            ->check(controller::finite_number(0, core::k_max_duration_s));
        try {
            app.parse(std::string("--immediate=") + bad, false);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const CLI::ParseError& e) {
            EXPECT_THAT(e.what(), HasSubstr("--immediate")) << bad;
        }
    }
    CLI::App app;
    double value = 0;
    app.add_option("--immediate", value)
        ->check(controller::finite_number(0, core::k_max_duration_s));
    app.parse("--immediate 30", false);
    EXPECT_DOUBLE_EQ(value, 30.0);
}

TEST(CliNumbers, StandaloneRefusesABudgetOrBreakerFractionThatIsNotFinite) {
    core::SystemCommandRunner runner;
    agent::StandaloneOptions options;
    options.node = "n1";
    for (double budget : {std::numeric_limits<double>::quiet_NaN(), 1e300,
                          std::numeric_limits<double>::infinity()}) {
        options.budget_s = budget;
        EXPECT_EQ(agent::run_standalone(options, runner), 2) << budget;
    }
    options.budget_s = 10;
    options.max_action_fraction = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(agent::run_standalone(options, runner), 2);
}

TEST(CliNumbers, AgentRefusesAConnectTimeoutThatIsNotFinite) {
    for (const char* bad : {"nan", "1e300"}) {
        std::vector<std::string> args = {"preflight-agent",
                                         "--controller",
                                         "127.0.0.1:1",
                                         "--node",
                                         "n1",
                                         "--connect-timeout",
                                         bad};
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        EXPECT_EQ(agent::agent_main(static_cast<int>(argv.size()), argv.data()), 2) << bad;
    }
}

TEST(CliNumbers, AgentRefusesAControllerPortThatIsNotAWholePort) {
    // With a key and a short dial, only the port can make it a usage error (2); a good port that
    // nothing listens on is unreachable (4).
    const auto run = [](const char* controller) {
        ::setenv("PREFLIGHT_NODE_KEY",
                 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 1);
        std::vector<std::string> args = {
            "preflight-agent",   "--controller", controller,    "--node", "n1",
            "--connect-timeout", "0.2",          "--log-level", "off"};
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        return agent::agent_main(static_cast<int>(argv.size()), argv.data());
    };
    for (const char* bad : {"127.0.0.1:12abc", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:-1",
                            "127.0.0.1:99999999999"}) {
        EXPECT_EQ(run(bad), 2) << bad;
    }
    EXPECT_EQ(run("127.0.0.1:1"), 4);
}

}  // namespace
}  // namespace preflight
