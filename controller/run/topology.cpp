#include "controller/run/topology.hpp"

#include <sstream>
#include <vector>

#include "core/hostlist.hpp"

namespace preflight::controller {

core::Result<std::map<std::string, std::string>> parse_slurm_topology(std::string_view text) {
    std::map<std::string, std::string> leaf_of;
    std::istringstream in{std::string(text)};
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (auto hash = line.find('#'); hash != std::string::npos) {
            line.erase(hash);
        }
        std::istringstream words(line);
        std::string word;
        std::string switch_name;
        std::string nodes;
        bool any = false;
        while (words >> word) {
            any = true;
            auto eq = word.find('=');
            if (eq == std::string::npos) {
                return core::Error{"topology line " + std::to_string(number) + ": '" + word +
                                   "' is not KEY=VALUE"};
            }
            auto key = word.substr(0, eq);
            auto value = word.substr(eq + 1);
            if (key == "SwitchName") {
                switch_name = value;
            } else if (key == "Nodes") {
                nodes = value;
            }
            // LinkSpeed=, Switches= and other keys do not place nodes.
        }
        if (!any) {
            continue;
        }
        if (switch_name.empty()) {
            return core::Error{"topology line " + std::to_string(number) + ": no SwitchName="};
        }
        if (nodes.empty()) {
            continue;  // a spine: Switches= only
        }
        auto names = core::expand_hostlist(nodes);
        if (!names) {
            return core::Error{"topology line " + std::to_string(number) + ": Nodes=" + nodes +
                               ": " + names.error().message};
        }
        for (const auto& node : names.value()) {
            auto [it, inserted] = leaf_of.emplace(node, switch_name);
            if (!inserted && it->second != switch_name) {
                return core::Error{"topology line " + std::to_string(number) + ": node " + node +
                                   " is under both " + it->second + " and " + switch_name};
            }
        }
    }
    return leaf_of;
}

}  // namespace preflight::controller
