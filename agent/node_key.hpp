// Where an agent's key comes from: its own node key (--key-file, $PREFLIGHT_NODE_KEY_FILE or
// $PREFLIGHT_NODE_KEY, as `preflight keys derive` makes them and the local and Slurm launchers
// hand them out), or, for the pods of a Kubernetes run, the run's secret from which it derives
// its own node key ($PREFLIGHT_RUN_SECRET). Every variable is removed from the environment once
// read, so no check program inherits it.
#pragma once

#include <string>

#include "core/result.hpp"

namespace preflight::agent {

core::Result<std::string> load_node_key(const std::string& key_file, const std::string& node);

}  // namespace preflight::agent
