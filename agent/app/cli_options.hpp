// The option groups of the agent's subcommands: the common ones (every subcommand), a session's
// (a controller to dial) and the standalone profiles' (agent/standalone.hpp).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "agent/agent_options.hpp"
#include "agent/standalone.hpp"

namespace preflight::agent {

// What every subcommand takes.
struct CommonArgs {
    std::string log_level = "info";
    bool log_json = false;
    std::string exec_allow;
};

// A session's own options, checked into AgentOptions by prepare_session.
struct SessionArgs {
    std::string controller;
    std::string key_file;
    bool key_stdin = false;
};

// The standalone options that are not StandaloneOptions fields as they are.
struct StandaloneArgs {
    std::string on_error = "allow";
};

void add_common_options(CLI::App& cmd, CommonArgs& common, AgentOptions& options);
void add_session_options(CLI::App& cmd, SessionArgs& session, AgentOptions& options);
void add_standalone_options(CLI::App& cmd, StandaloneOptions& standalone, StandaloneArgs& args);

// After parsing, before any subcommand runs: the node name ($SLURMD_NODENAME under srun when not
// given), logging, stop signals and the exec policy. nullopt when ready, else the exit code.
std::optional<int> set_up(const CommonArgs& common, AgentOptions& options);

// --controller HOST:PORT, --node and the node key into options: nullopt when ready, else the
// exit code (a usage error, named on stderr).
std::optional<int> prepare_session(const SessionArgs& session, AgentOptions& options);

// The standalone options completed from the common ones (node, exec policy, sysfs root) and
// --on-error; nullopt when ready, else the exit code.
std::optional<int> prepare_standalone(const StandaloneArgs& args, const AgentOptions& options,
                                      StandaloneOptions& standalone);

}  // namespace preflight::agent
