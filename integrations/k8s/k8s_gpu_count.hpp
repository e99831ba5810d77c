// How many GPUs each agent pod asks for when k8s.gpus_per_node is 0, from the run's Nodes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::controller::k8s {

// From a NodeList: the GPUs to ask for per pod, the minimum of status.allocatable
// ["nvidia.com/gpu"] over the run's nodes that have any (0 when none has), and notes for the
// operator (nodes without GPUs or not found, nodes with more GPUs than asked for). Pure.
struct GpuCount {
    int gpus = 0;
    std::vector<std::string> notes;
};
GpuCount gpus_from_nodes(const nlohmann::json& node_list, const std::vector<std::string>& nodes);

}  // namespace preflight::controller::k8s
