// Where nodes sit in the fabric, for topology-aware grouping: a node's leaf switch from a Slurm
// topology.conf (tree plugin: "SwitchName=leaf1 Nodes=gpu[001-032]"), or a node label such as
// `rack`. Round 1 then pairs nodes under the same switch first, so a pair's traffic stays on one
// leaf and a slow uplink does not make two healthy nodes look slow.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace preflight::controller {

// node -> leaf switch. Lines with Nodes= define leaves; Switches=-only lines (spines) and comments
// are skipped. Errors name the 1-based line: a bad hostlist, a line without SwitchName, or a node
// under two leaves.
core::Result<std::map<std::string, std::string>> parse_slurm_topology(std::string_view text);

}  // namespace preflight::controller
