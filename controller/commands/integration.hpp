// What a scheduler integration adds to preflight (the generic layers' side of the seam): its
// launchers, action targets, `run` and `certify` options and flows, its own subcommands, and the
// agent's standalone hooks. Each wing (integrations/<scheduler>/) fills one; the registry
// (integrations/registry.hpp) lists them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/agent_mode.hpp"
#include "agent/standalone.hpp"
#include "controller/commands/commands.hpp"
#include "controller/launch/launcher.hpp"
#include "controller/run/run_options.hpp"
#include "outcome/sink.hpp"

namespace preflight::integrations {

struct Integration {
    std::string name;  // "slurm", "k8s", "ssh"
    controller::LauncherTable launchers;
    outcome::SinkTable sinks;  // its action targets (`actions.targets`)
    // `preflight run` options it adds (e.g. --partition); empty: none.
    std::function<void(CLI::App& run)> add_run_options;
    // Before `preflight run` (and its --dry-run) with launcher `options.launcher`: nullopt to go
    // on, else the exit code. Called for every run: an integration acts only for its own launchers.
    std::function<std::optional<int>(controller::RunOptions& options, bool dry_run)> before_run;
    // The nodes of a run given none (--nodes, --inventory) with this launcher: Slurm's allocation;
    // "" when it has none to offer.
    std::function<std::string(const std::string& launcher)> default_nodes;
    // `preflight certify`: its options, and the certification itself when its options chose it
    // (nullopt when they did not). The first integration that runs it decides.
    std::function<void(CLI::App& certify)> add_certify_options;
    std::function<std::optional<int>(const controller::CertifyArgs& args,
                                     const std::string& log_level, bool log_json)>
        certify;
    // Its own subcommands (`preflight slurm ...`, `preflight gang-gate`).
    std::function<std::vector<controller::SubcommandRun>(CLI::App& app)> add_commands;
    // The agent's standalone profiles' scheduler side (drain, health check); empty: none.
    agent::StandaloneHooks standalone;
    // The agent subcommands it adds (`preflight-agent node-condition`).
    std::vector<agent::AgentMode> agent_modes;
};

}  // namespace preflight::integrations
