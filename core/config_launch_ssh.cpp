// The `launch.ssh` section of the run configuration; see core/run_config.hpp.
#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {

void parse_launch_ssh(const std::string& file, const YAML::Node& node, SshLaunchConfig& out) {
    (void)out;
    yaml::reject_unknown_keys(file, node, "launch.ssh", {});
}

}  // namespace preflight::core::config_sections
