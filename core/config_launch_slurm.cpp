// The `launch.slurm` section of the run configuration; see core/run_config.hpp.
#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {

void parse_launch_slurm(const std::string& file, const YAML::Node& node, SlurmStepConfig& out) {
    (void)out;
    yaml::reject_unknown_keys(file, node, "launch.slurm", {});
}

}  // namespace preflight::core::config_sections
