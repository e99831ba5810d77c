// An agent subcommand a scheduler integration adds (`preflight-agent node-condition`,
// `preflight-agent gang-gate`): its name, and how it adds its options and runs. The agent's
// command line (agent/app/) gives each mode the options it asks for: the standalone options
// (agent/standalone.hpp) and/or the session options (a controller to dial).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/agent_options.hpp"
#include "agent/standalone.hpp"

namespace preflight::agent {

// What a mode runs with, filled by the command line before it runs.
struct AgentModeContext {
    AgentOptions& session;          // node, exec policy, sysfs root; controller and key if asked
    StandaloneOptions& standalone;  // when the mode asked for the standalone options
    std::vector<std::string> argv;  // the command line as parsed (legacy forms already mapped)
    // Checks --controller, --node and the node key into `session`: nullopt when ready, else the
    // exit code (a usage error, named on stderr).
    std::function<std::optional<int>()> prepare_session;
    // The standalone hooks of the build's integrations (drain, health check).
    StandaloneHooks standalone_hooks;
};

struct AgentMode {
    std::string name;
    std::string summary;
    bool standalone_options = false;  // the mode takes the standalone options
    bool session_options = false;     // the mode dials a controller (--controller, key, TLS)
    // Adds the mode's own options to its subcommand; returns how to run it once parsed.
    std::function<std::function<int(AgentModeContext&)>(CLI::App& command)> add;
    // Options of the older flag form of this mode (`--k8s-node-condition`, `--gate-verdict`):
    // a command line without a subcommand that has one is this mode (the flag itself dropped
    // when `drop` is true).
    std::vector<std::pair<std::string, bool>> legacy_flags;
};

}  // namespace preflight::agent
