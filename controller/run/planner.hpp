// Group planning for inter-node checks (the rounds of ARCHITECTURE.md "One run"). Pure functions
// over node names: round 1 puts every node in a disjoint pair at once; round 2 re-pairs each node
// of a slow pair with a distinct node that passed, which tells which end is slow; round 3 confirms
// each suspect once more with another good partner. The number of rounds does not grow with the
// node count; never all-pairs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace preflight::controller {

using Members = std::vector<std::string>;

// Disjoint pairs in the given order within each cohort (cohort_of(node)); an odd node out joins its
// cohort's last pair as a group of three. With `deferred`, a cohort of five leaves its odd node
// out of round 1 instead (a slow group of three would be most of the cohort's figures): it is
// appended to *deferred, to be paired with a node that passed in round 2. Nodes alone in their
// cohort are pooled and paired together. Fewer than two nodes in total: no groups. With topology_of
// (a node's leaf switch or rack), each cohort's nodes are first gathered by switch (in order of
// first appearance), so pairs stay under one switch wherever the switch has a partner left.
std::vector<Members> plan_pairs(
    const std::vector<std::string>& nodes,
    const std::function<std::string(const std::string&)>& cohort_of,
    const std::function<std::string(const std::string&)>& topology_of = {},
    std::vector<std::string>* deferred = nullptr);

struct Repairing {
    std::vector<Members> groups;        // {suspect, partner}
    std::vector<std::string> unpaired;  // suspects for whom no allowed partner was free
};

// Pairs each suspect with a distinct good partner, preferring partners of the same cohort and never
// one listed in avoid[suspect] (partners it was already measured with). No partner is used twice.
Repairing plan_repairs(const std::vector<std::string>& suspects,
                       const std::vector<std::string>& good,
                       const std::map<std::string, std::set<std::string>>& avoid,
                       const std::function<std::string(const std::string&)>& cohort_of);

}  // namespace preflight::controller
