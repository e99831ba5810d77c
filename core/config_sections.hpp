// The parsers of the run configuration's sections (actions, deadlines, controller,
// controller.tls, k8s, launch.slurm, launch.ssh, job), each from a YAML node of file into its
// settings; errors are ConfigError with file:line:col. Internal to core/config.cpp's loader.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/run_config.hpp"

namespace preflight::core::config_sections {

void parse_actions(const std::string& file, const YAML::Node& node, ActionsConfig& out);
void parse_deadlines(const std::string& file, const YAML::Node& node, DeadlineConfig& out);
void parse_controller(const std::string& file, const YAML::Node& node, ControllerConfig& out);
void parse_tls(const std::string& file, const YAML::Node& node, TlsConfig& out);
void parse_k8s(const std::string& file, const YAML::Node& node, KubernetesConfig& out);
// launch.slurm (core/config_launch_slurm.cpp) and launch.ssh (core/config_launch_ssh.cpp).
void parse_launch_slurm(const std::string& file, const YAML::Node& node, SlurmStepConfig& out);
void parse_launch_ssh(const std::string& file, const YAML::Node& node, SshLaunchConfig& out);
// ledger (core/config_ledger.cpp).
void parse_ledger(const std::string& file, const YAML::Node& node, LedgerConfig& out);
nlohmann::json parse_job(const std::string& file, const YAML::Node& node);

}  // namespace preflight::core::config_sections
