// Runs one inter-node check (a collective) through the planner's rounds on connected agents and
// turns the group measurements into one result per node: the node's figure is the best group it was
// in (a group is only as fast as its slowest member), so a node that was merely paired with a slow
// one is cleared by its re-pairing, and a node that is slow with every partner keeps a low figure.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "controller/run/group_check.hpp"
#include "core/judge.hpp"

namespace preflight::controller {

class RoundsState;

// Rounds 1 and 2 of one check: disjoint pairs, then each node the judge fails re-paired with a
// node that passed, in waves, re-judging after each. Carries its state to confirm_suspects.
struct SuspectSearch {
    std::vector<std::string> nodes;
    std::shared_ptr<RoundsState> state;
    core::CohortJudgement judged;      // the judge over the figures after the last round
    std::set<std::string> tried;       // re-paired once with a good partner
    std::set<std::string> still_slow;  // ... and slow there, against the last judgement
    std::map<std::string, std::size_t> repair_group;  // tried node -> its re-pairing's group
};
SuspectSearch locate_suspects(const StepRunner& run_steps, const GroupCheckPlan& plan,
                              const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                              const ProgressFn& progress);

// Round 3: each suspect still failing, once more with another good partner. A node the final
// judgement fails that was not confirmed here is an `error` (unconfirmed suspect), never a fail.
GroupCheckOutcome confirm_suspects(SuspectSearch search, const CohortOf& cohort_of);

// Both, for one check.
GroupCheckOutcome run_group_check(const StepRunner& run_steps, const GroupCheckPlan& plan,
                                  const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                                  const ProgressFn& progress);

}  // namespace preflight::controller
