// Kubernetes subcommands of `preflight`: `certify --k8s` (certify reimaged nodes: remove
// preflight.dev/uncertified from the nodes that pass). Registered by one line in cli.cpp and run
// after the command line is parsed and logging is set up.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace preflight::controller {

struct K8sCommands;

std::shared_ptr<K8sCommands> add_k8s_commands(CLI::App& app);

// The exit code when one of our subcommands was given, else nullopt.
std::optional<int> run_k8s_commands(const K8sCommands& commands, const std::string& log_level,
                                    bool log_json);

}  // namespace preflight::controller
