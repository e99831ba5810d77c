// The GPU count for agent pods from the nodes' allocatable nvidia.com/gpu (pure).
#include "integrations/k8s/k8s_gpu_count.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/k8s_names.hpp"
#include "core/k8s_pod_template.hpp"

namespace preflight::controller::k8s {

using nlohmann::json;
namespace ck = core::k8s;

GpuCount gpus_from_nodes(const json& node_list, const std::vector<std::string>& nodes) {
    std::map<std::string, long long> allocatable;
    std::set<std::string> listed;
    for (const auto& node : node_list.value("items", json::array())) {
        if (!node.is_object()) {
            continue;
        }
        const std::string name =
            node.value("metadata", json::object()).value("name", std::string());
        listed.insert(name);
        const json alloc =
            node.value("status", json::object()).value("allocatable", json::object());
        const auto it = alloc.find(std::string(ck::k_gpu_resource));
        if (it == alloc.end()) {
            continue;
        }
        const std::string text = it->is_string() ? it->get<std::string>() : it->dump();
        auto q = core::k8s::parse_quantity(text);
        if (q && q->integer && !q->negative && q->value >= 1 && q->value <= 1024) {
            allocatable[name] = static_cast<long long>(q->value);
        }
    }
    GpuCount out;
    std::vector<std::string> without;
    std::vector<std::string> missing;
    long long lowest = 0;
    long long highest = 0;
    for (const auto& n : nodes) {
        if (listed.count(n) == 0) {
            missing.push_back(n);
            continue;
        }
        auto it = allocatable.find(n);
        if (it == allocatable.end()) {
            without.push_back(n);
            continue;
        }
        lowest = lowest == 0 ? it->second : std::min(lowest, it->second);
        highest = std::max(highest, it->second);
    }
    auto names = [](const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size() && i < 8; ++i) {
            s += (i == 0 ? "" : ", ") + v[i];
        }
        return v.size() > 8 ? s + ", ... (" + std::to_string(v.size()) + " in all)" : s;
    };
    out.gpus = static_cast<int>(lowest);
    if (!missing.empty()) {
        out.notes.push_back("not found in the API: " + names(missing));
    }
    if (!without.empty()) {
        out.notes.push_back("no allocatable nvidia.com/gpu (their pods cannot be scheduled " +
                            std::string(lowest > 0 ? "with a GPU request" : "on GPUs") +
                            "): " + names(without));
    }
    if (lowest > 0 && highest != lowest) {
        out.notes.push_back("nodes have " + std::to_string(lowest) + " to " +
                            std::to_string(highest) + " allocatable GPUs; every pod asks for " +
                            std::to_string(lowest) + " (set k8s.gpus_per_node to choose)");
    }
    return out;
}

}  // namespace preflight::controller::k8s
