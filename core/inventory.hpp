// The node inventory: YAML `nodes: [{name, netns?, address?, labels?}]`, or a Slurm hostlist.
// Names are checked against [A-Za-z0-9._-] so that nothing odd ever reaches a command line.
#pragma once

#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/model.hpp"

namespace preflight::core {

// Throws ConfigError("file:line:col: ...") for unknown keys, duplicate or invalid names.
std::vector<Node> load_inventory(const std::string& path);
std::vector<Node> parse_inventory(const std::string& text, const std::string& name);
// Throws ConfigError for a malformed hostlist or an invalid name.
std::vector<Node> inventory_from_hostlist(const std::string& hostlist);

// Adds known-good partners (--reference-nodes HOSTLIST) to a run's nodes, marked `reference`: a
// name already among the nodes becomes a reference node (it keeps its inventory entry); a new
// name gets the labels all the other nodes share (so it joins their cohort), or none when they
// differ. Throws ConfigError for a malformed hostlist, an invalid name, or when no candidate is
// left (every node a reference).
void add_reference_nodes(std::vector<Node>& nodes, const std::string& hostlist);

bool valid_node_name(std::string_view name);

}  // namespace preflight::core
