#include "controller/run/planner.hpp"

#include <algorithm>

namespace preflight::controller {

namespace {

// Stable gathering by switch: the switches in order of first appearance, each switch's nodes in
// their given order.
std::vector<std::string> gather_by_switch(
    const std::vector<std::string>& members,
    const std::function<std::string(const std::string&)>& topology_of) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::string>> by_switch;
    for (const auto& node : members) {
        auto sw = topology_of(node);
        if (by_switch.count(sw) == 0) {
            order.push_back(sw);
        }
        by_switch[sw].push_back(node);
    }
    std::vector<std::string> out;
    out.reserve(members.size());
    for (const auto& sw : order) {
        out.insert(out.end(), by_switch[sw].begin(), by_switch[sw].end());
    }
    return out;
}

}  // namespace

std::vector<Members> plan_pairs(const std::vector<std::string>& nodes,
                                const std::function<std::string(const std::string&)>& cohort_of,
                                const std::function<std::string(const std::string&)>& topology_of,
                                std::vector<std::string>* deferred) {
    // Cohorts in order of first appearance, so the plan follows the inventory order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::string>> cohorts;
    for (const auto& node : nodes) {
        auto cohort = cohort_of(node);
        if (cohorts.count(cohort) == 0) {
            order.push_back(cohort);
        }
        cohorts[cohort].push_back(node);
    }
    std::vector<Members> groups;
    std::vector<std::string> singletons;
    auto pair_up = [&groups, deferred](const std::vector<std::string>& members, bool cohort_sized) {
        std::size_t first = groups.size();
        for (std::size_t i = 0; i + 1 < members.size(); i += 2) {
            groups.push_back({members[i], members[i + 1]});
        }
        if (members.size() % 2 == 1 && groups.size() > first) {
            // In a cohort of five a slow group of three would hold three of the five node
            // figures, and the cohort median would be the slow figure: the odd node waits for
            // round 2 instead, where it is paired with a node that passed.
            if (deferred != nullptr && members.size() == 5 && cohort_sized) {
                deferred->push_back(members.back());
            } else {
                groups.back().push_back(members.back());
            }
        }
    };
    if (topology_of) {
        for (auto& [cohort, members] : cohorts) {
            members = gather_by_switch(members, topology_of);
        }
    }
    for (const auto& cohort : order) {
        const auto& members = cohorts[cohort];
        if (members.size() == 1) {
            singletons.push_back(members.front());
        } else {
            pair_up(members, true);
        }
    }
    if (singletons.size() >= 2) {
        pair_up(singletons, false);
    } else if (singletons.size() == 1 && !groups.empty()) {
        // Prefer a pair, so no group grows beyond three.
        auto pair = std::find_if(groups.rbegin(), groups.rend(),
                                 [](const Members& g) { return g.size() == 2; });
        (pair != groups.rend() ? *pair : groups.back()).push_back(singletons.front());
    }
    return groups;
}

Repairing plan_repairs(const std::vector<std::string>& suspects,
                       const std::vector<std::string>& good,
                       const std::map<std::string, std::set<std::string>>& avoid,
                       const std::function<std::string(const std::string&)>& cohort_of) {
    Repairing out;
    std::set<std::string> used;
    auto allowed = [&](const std::string& suspect, const std::string& partner) {
        if (used.count(partner) != 0 || partner == suspect) {
            return false;
        }
        auto it = avoid.find(suspect);
        return it == avoid.end() || it->second.count(partner) == 0;
    };
    for (const auto& suspect : suspects) {
        std::string cohort = cohort_of(suspect);
        const std::string* choice = nullptr;
        for (const auto& partner : good) {
            if (allowed(suspect, partner) && cohort_of(partner) == cohort) {
                choice = &partner;
                break;
            }
        }
        if (choice == nullptr) {
            for (const auto& partner : good) {
                if (allowed(suspect, partner)) {
                    choice = &partner;
                    break;
                }
            }
        }
        if (choice == nullptr) {
            out.unpaired.push_back(suspect);
            continue;
        }
        used.insert(*choice);
        out.groups.push_back({suspect, *choice});
    }
    return out;
}

}  // namespace preflight::controller
