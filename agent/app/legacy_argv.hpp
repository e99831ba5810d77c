// The agent's command line before subcommands (`preflight-agent --standalone ...`,
// `--controller ... --gate-verdict F`, `--standalone --k8s-node-condition`) as the subcommand form,
// so that operators' scripts and manifests written for it keep working.
#pragma once

#include <string>
#include <vector>

#include "agent/agent_mode.hpp"

namespace preflight::agent {

// argv unchanged when its first argument is a subcommand (or --help/--version, or nothing);
// otherwise the subcommand it means inserted after argv[0]: a mode whose legacy flag it holds
// (that flag dropped when the mode says so), else `standalone` when it holds --standalone
// (dropped), else `session`. Pure.
std::vector<std::string> subcommand_argv(const std::vector<std::string>& argv,
                                         const std::vector<AgentMode>& modes);

}  // namespace preflight::agent
