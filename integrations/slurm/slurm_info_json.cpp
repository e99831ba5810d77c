// `scontrol show node --json` and `sinfo --json` node lists of every Slurm version; see
// slurm_info.hpp.
#include <algorithm>
#include <cctype>
#include <map>

#include <nlohmann/json.hpp>

#include "integrations/slurm/slurm_info.hpp"

namespace preflight::outcome {
namespace {

using nlohmann::json;

std::string upper_word(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

std::string string_member(const json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Strings of an array member, joined with '+'; "" when absent or not an array.
std::string joined_upper(const json& object, const char* key) {
    std::string out;
    auto it = object.find(key);
    if (it == object.end() || !it->is_array()) {
        return out;
    }
    for (const auto& item : *it) {
        if (item.is_string()) {
            out += (out.empty() ? "" : "+") + upper_word(item.get<std::string>());
        }
    }
    return out;
}

// The state of a data_parser node: an array (23.02 and later: ["IDLE", "DRAIN"]) or 22.05's
// string ("idle") plus "state_flags".
std::string node_state_of(const json& object) {
    const auto state = object.find("state");
    if (state != object.end() && state->is_array()) {
        return joined_upper(object, "state");
    }
    if (state != object.end() && state->is_string()) {
        std::string out = upper_word(state->get<std::string>());
        if (std::string flags = joined_upper(object, "state_flags"); !flags.empty()) {
            out += "+" + flags;
        }
        return out;
    }
    return {};
}

void add_partition_once(SlurmNodeInfo& n, const std::string& partition) {
    if (!partition.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), partition) == n.partitions.end()) {
        n.partitions.push_back(partition);
    }
}

// A "nodes" array: `scontrol show node --json`, and `sinfo --json` of 22.05.
std::vector<SlurmNodeInfo> from_node_objects(const json& nodes) {
    std::vector<SlurmNodeInfo> out;
    for (const auto& node : nodes) {
        if (!node.is_object()) {
            continue;
        }
        SlurmNodeInfo n;
        n.name = string_member(node, "name");
        if (n.name.empty()) {
            continue;
        }
        n.addr = string_member(node, "address");
        n.state = node_state_of(node);
        n.reason = string_member(node, "reason");
        n.comment = string_member(node, "comment");
        n.gres = string_member(node, "gres");
        if (const auto parts = node.find("partitions"); parts != node.end() && parts->is_array()) {
            for (const auto& p : *parts) {
                if (p.is_string()) {
                    add_partition_once(n, p.get<std::string>());
                }
            }
        }
        out.push_back(std::move(n));
    }
    return out;
}

const json& object_member(const json& object, const char* key) {
    static const json empty = json::object();
    const auto it = object.find(key);
    return it != object.end() && it->is_object() ? *it : empty;
}

// A "sinfo" array (23.02 and later): records of nodes that share a state and a partition, each
// node's name in nodes.nodes (addresses in nodes.addresses, in the same order, when given).
std::vector<SlurmNodeInfo> from_sinfo_records(const json& records) {
    std::vector<SlurmNodeInfo> out;
    std::map<std::string, std::size_t> seen;
    for (const auto& record : records) {
        if (!record.is_object()) {
            continue;
        }
        const json& nodes = object_member(record, "nodes");
        const auto names = nodes.find("nodes");
        if (names == nodes.end() || !names->is_array()) {
            continue;
        }
        const auto addrs = nodes.find("addresses");
        const json& reason = object_member(record, "reason");
        for (std::size_t i = 0; i < names->size(); ++i) {
            if (!(*names)[i].is_string() || (*names)[i].get<std::string>().empty()) {
                continue;
            }
            const std::string name = (*names)[i].get<std::string>();
            auto [at, fresh] = seen.emplace(name, out.size());
            if (fresh) {
                SlurmNodeInfo n;
                n.name = name;
                if (addrs != nodes.end() && addrs->is_array() && addrs->size() == names->size() &&
                    (*addrs)[i].is_string()) {
                    n.addr = (*addrs)[i].get<std::string>();
                }
                n.state = node_state_of(object_member(record, "node"));
                n.reason = string_member(reason, "description");
                n.comment = string_member(record, "comment");
                n.gres = string_member(object_member(record, "gres"), "total");
                out.push_back(std::move(n));
            }
            add_partition_once(out[at->second],
                               string_member(object_member(record, "partition"), "name"));
        }
    }
    return out;
}

}  // namespace

core::Result<std::vector<SlurmNodeInfo>> parse_slurm_nodes_json(std::string_view text) {
    const json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (!doc.is_discarded() && doc.is_object()) {
        if (const auto nodes = doc.find("nodes"); nodes != doc.end() && nodes->is_array()) {
            return from_node_objects(*nodes);
        }
        if (const auto records = doc.find("sinfo"); records != doc.end() && records->is_array()) {
            return from_sinfo_records(*records);
        }
    }
    return core::Error{"not Slurm's JSON node list (no \"nodes\" or \"sinfo\" array)"};
}

}  // namespace preflight::outcome
