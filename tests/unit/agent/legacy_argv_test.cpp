// The agent's older flag forms mapped onto its subcommands, so that scripts and manifests written
// for them keep working: `--standalone` is `standalone`, `--standalone --k8s-node-condition` is
// `node-condition`, `--controller ... --gate-verdict F` is `gang-gate`, and any other flag form
// is `session`.
#include <gtest/gtest.h>

#include "agent/app/legacy_argv.hpp"
#include "integrations/registry.hpp"

namespace preflight::agent {
namespace {

using Argv = std::vector<std::string>;

std::vector<AgentMode> modes() {
    std::vector<AgentMode> out;
    for (const auto& in : integrations::make_all()) {
        out.insert(out.end(), in.agent_modes.begin(), in.agent_modes.end());
    }
    return out;
}

TEST(LegacyArgv, SubcommandFormsAreLeftAsTheyAre) {
    for (const Argv& argv : {Argv{"a"}, Argv{"a", "session", "--controller", "h:1"},
                             Argv{"a", "standalone", "--standalone"}, Argv{"a", "--help"},
                             Argv{"a", "--version"}, Argv{"a", "-h"}}) {
        EXPECT_EQ(subcommand_argv(argv, modes()), argv);
    }
}

TEST(LegacyArgv, FlagFormsGetTheirSubcommand) {
    EXPECT_EQ(
        subcommand_argv({"a", "--standalone", "--profile", "prolog", "--node", "n1"}, modes()),
        (Argv{"a", "standalone", "--profile", "prolog", "--node", "n1"}));
    EXPECT_EQ(subcommand_argv({"a", "--standalone", "--profile=prolog", "--k8s-node-condition",
                               "--interval=300"},
                              modes()),
              (Argv{"a", "node-condition", "--profile=prolog", "--interval=300"}));
    EXPECT_EQ(subcommand_argv({"a", "--controller=g:7070", "--node=n", "--gate-verdict=/v/x",
                               "--on-error=block"},
                              modes()),
              (Argv{"a", "gang-gate", "--controller=g:7070", "--node=n", "--gate-verdict=/v/x",
                    "--on-error=block"}));
    EXPECT_EQ(subcommand_argv({"a", "--controller", "10.0.0.1:7000", "--node", "n1"}, modes()),
              (Argv{"a", "session", "--controller", "10.0.0.1:7000", "--node", "n1"}));
}

}  // namespace
}  // namespace preflight::agent
