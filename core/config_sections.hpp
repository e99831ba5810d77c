// The parsers of the run configuration's sections (actions, deadlines, controller,
// controller.tls, k8s, job), each from a YAML node of file into its settings; errors are
// ConfigError with file:line:col. Internal to core/config.cpp's loader.
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
nlohmann::json parse_job(const std::string& file, const YAML::Node& node);

}  // namespace preflight::core::config_sections
