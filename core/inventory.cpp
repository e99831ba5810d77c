#include "core/inventory.hpp"

#include <algorithm>
#include <optional>

#include <arpa/inet.h>

#include <map>

#include "core/hostlist.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core {

namespace {

constexpr std::size_t k_max_name_length = 64;

std::string invalid_name_message(std::string_view what, const std::string& name) {
    return "invalid " + std::string(what) + " '" + name +
           "' (allowed: letters, digits, '.', '_', '-'; at most " +
           std::to_string(k_max_name_length) + " characters; not starting with '-')";
}

Node parse_node(const std::string& file, const YAML::Node& entry, std::size_t index) {
    const std::string section = "nodes[" + std::to_string(index) + "]";
    yaml::reject_unknown_keys(file, entry, section, {"name", "netns", "address", "labels"});
    Node node;
    const YAML::Node name = yaml::get(file, entry, "name", section + ".name");
    if (!name) {
        yaml::fail(file, entry, "'" + section + "' has no 'name'");
    }
    node.name = yaml::as_string(file, name, section + ".name");
    if (!valid_node_name(node.name)) {
        yaml::fail(file, name, invalid_name_message("node name", node.name));
    }
    if (const YAML::Node netns = yaml::get(file, entry, "netns", section + ".netns")) {
        node.netns = yaml::as_string(file, netns, section + ".netns");
        // The launcher passes it to `ip netns exec` / opens /run/netns/<name>: same rules as names.
        if (!valid_node_name(node.netns)) {
            yaml::fail(file, netns, invalid_name_message("netns name", node.netns));
        }
    }
    if (const YAML::Node address = yaml::get(file, entry, "address", section + ".address")) {
        node.address = yaml::as_string(file, address, section + ".address");
        in_addr parsed{};
        if (::inet_pton(AF_INET, node.address.c_str(), &parsed) != 1) {
            yaml::fail(
                file, address,
                "'" + section + ".address' must be an IPv4 address, got '" + node.address + "'");
        }
    }
    if (const YAML::Node labels = entry["labels"]; labels && !labels.IsNull()) {
        yaml::require_map(file, labels, section + ".labels");
        for (const auto& label : labels) {
            const std::string key = label.first.Scalar();
            if (key.empty()) {
                yaml::fail(file, label.first, "empty label name in '" + section + ".labels'");
            }
            node.labels[key] = yaml::as_string(file, label.second, section + ".labels." + key);
        }
    }
    return node;
}

}  // namespace

bool valid_node_name(std::string_view name) {
    if (name.empty() || name.size() > k_max_name_length || name.front() == '-') {
        return false;
    }
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::vector<Node> parse_inventory(const std::string& text, const std::string& name) {
    const YAML::Node root = yaml::parse(text, name);
    if (!root.IsDefined() || root.IsNull()) {
        throw ConfigError(name + ": inventory is empty (expected 'nodes: [...]')");
    }
    yaml::reject_unknown_keys(name, root, "", {"nodes"});
    const YAML::Node list = yaml::get(name, root, "nodes", "nodes");
    if (!list) {
        yaml::fail(name, root, "missing 'nodes'");
    }
    if (!list.IsSequence()) {
        yaml::fail(name, list, "'nodes' must be a list");
    }
    if (list.size() == 0) {
        yaml::fail(name, list, "'nodes' is empty");
    }
    std::vector<Node> nodes;
    std::map<std::string, YAML::Node> seen;
    std::size_t index = 0;
    for (const auto& entry : list) {
        Node node = parse_node(name, entry, index++);
        const YAML::Node name_node = entry["name"];
        if (auto [it, inserted] = seen.emplace(node.name, name_node); !inserted) {
            yaml::fail(name, name_node,
                       "duplicate node name '" + node.name + "' (first at " +
                           yaml::where(name, it->second) + ")");
        }
        nodes.push_back(std::move(node));
    }
    return nodes;
}

std::vector<Node> load_inventory(const std::string& path) {
    return parse_inventory(yaml::read_file(path), path);
}

std::vector<Node> inventory_from_hostlist(const std::string& hostlist) {
    auto names = expand_hostlist(hostlist);
    if (!names) {
        throw ConfigError("hostlist '" + hostlist + "': " + names.error().message);
    }
    if (names->empty()) {
        throw ConfigError("hostlist is empty");
    }
    std::vector<Node> nodes;
    std::map<std::string, bool> seen;
    for (auto& name : *names) {
        if (!valid_node_name(name)) {
            throw ConfigError("hostlist '" + hostlist +
                              "': " + invalid_name_message("node name", name));
        }
        if (!seen.emplace(name, true).second) {
            throw ConfigError("hostlist '" + hostlist + "': duplicate node name '" + name + "'");
        }
        nodes.push_back(Node{std::move(name), {}, {}, {}});
    }
    return nodes;
}

void add_reference_nodes(std::vector<Node>& nodes, const std::string& hostlist) {
    std::optional<std::map<std::string, std::string>> shared;
    bool same = true;
    for (const auto& n : nodes) {
        if (!shared) {
            shared = n.labels;
        } else if (*shared != n.labels) {
            same = false;
        }
    }
    for (auto& ref : inventory_from_hostlist(hostlist)) {
        auto it = std::find_if(nodes.begin(), nodes.end(),
                               [&](const Node& n) { return n.name == ref.name; });
        if (it != nodes.end()) {
            it->reference = true;
            continue;
        }
        ref.reference = true;
        if (same && shared) {
            ref.labels = *shared;
        }
        nodes.push_back(std::move(ref));
    }
    if (std::all_of(nodes.begin(), nodes.end(), [](const Node& n) { return n.reference; })) {
        throw ConfigError("--reference-nodes '" + hostlist +
                          "': every node is a reference node; nothing is left to validate");
    }
}

}  // namespace preflight::core
