#include "controller/run/group_rounds.hpp"

#include <spdlog/spdlog.h>

#include "controller/run/planner.hpp"
#include "controller/run/rounds_state.hpp"

namespace preflight::controller {

SuspectSearch locate_suspects(const StepRunner& run_steps, const GroupCheckPlan& plan,
                              const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                              const ProgressFn& progress) {
    SuspectSearch search;
    search.nodes = nodes;
    search.state = std::make_shared<RoundsState>(run_steps, plan, cohort_of, progress);
    auto& rounds = *search.state;
    auto& judged = search.judged;
    auto& tried = search.tried;
    auto& still_slow = search.still_slow;

    // Round 1: every node in a disjoint pair, all at once.
    std::vector<std::string> deferred;
    auto r1 =
        rounds.run(1, "disjoint pairs", plan_pairs(nodes, cohort_of, plan.topology_of, &deferred));
    judged = rounds.judge_now();
    rounds.mark_groups(r1, judged);
    rounds.note_reference(judged);

    // Round 2: each suspect of the judge (a node it fails, or one under the fast part of a split
    // cohort) and each node left without a figure by a lost partner, with a distinct good node,
    // which tells which end is slow. The judge runs again after each wave on the figures so far:
    // a suspect cleared by its re-pairing raises the median, and a node that now falls under it
    // is re-paired in the next wave, so that no node reaches the evaluation under the threshold
    // without having been re-paired.
    for (int wave = 0; wave < 3; ++wave) {
        auto split = rounds.split(nodes, judged, tried);
        if (split.candidates.empty() || split.good.empty()) {
            break;
        }
        auto plan2 =
            plan_repairs(split.candidates, split.good, rounds.avoid(split.candidates), cohort_of);
        auto r2 =
            rounds.run(2, wave == 0 ? "re-pair suspects" : "re-pair suspects (more)", plan2.groups);
        judged = rounds.judge_now();
        rounds.mark_groups(r2, judged);
        for (std::size_t i = 0; i < r2.size(); ++i) {
            tried.insert(plan2.groups[i].front());
            search.repair_group[plan2.groups[i].front()] = r2[i];
        }
    }
    // Slow in its re-pairing against the last judgement, not the one of its wave: a later wave can
    // clear the median (a cohort whose round-1 median sat among slow pairs), and a re-pairing that
    // looked normal against the old median is slow against the new one.
    std::vector<std::size_t> repairs;
    for (const auto& [node, idx] : search.repair_group) {
        repairs.push_back(idx);
    }
    rounds.mark_groups(repairs, judged);
    for (const auto& [node, idx] : search.repair_group) {
        if (rounds.group_slow(idx)) {
            still_slow.insert(node);
        }
    }
    for (const auto& c : rounds.split(nodes, judged, tried).candidates) {
        spdlog::warn("{}: no good partner was free to re-pair it with", c);
    }
    return search;
}

GroupCheckOutcome confirm_suspects(SuspectSearch search, const CohortOf& cohort_of) {
    // Round 3: confirm each suspect still failing with another good partner before any action.
    auto& rounds = *search.state;
    auto& judged = search.judged;
    const auto& nodes = search.nodes;
    const auto& tried = search.tried;
    const auto& still_slow = search.still_slow;
    std::set<std::string> inconsistent;
    std::set<std::string> confirmed;
    auto failing = RoundsState::failing(judged);
    std::vector<std::string> to_confirm;
    for (const auto& node : nodes) {
        if (still_slow.count(node) != 0 && failing.count(node) != 0) {
            to_confirm.push_back(node);
        }
    }
    if (!to_confirm.empty()) {
        auto good = rounds.split(nodes, judged, tried).good;
        auto plan3 = plan_repairs(to_confirm, good, rounds.avoid(to_confirm), cohort_of);
        auto r3 = rounds.run(3, "confirm suspects", plan3.groups);
        judged = rounds.judge_now();
        rounds.mark_groups(r3, judged);
        failing = RoundsState::failing(judged);
        for (std::size_t i = 0; i < r3.size(); ++i) {
            const auto& suspect = plan3.groups[i].front();
            if (rounds.group_ok(r3[i])) {
                inconsistent.insert(suspect);
            } else if (rounds.group_slow(r3[i]) && failing.count(suspect) != 0) {
                confirmed.insert(suspect);  // slow with two good partners
            }
        }
    }
    return rounds.finish(nodes, inconsistent, confirmed, failing);
}

GroupCheckOutcome run_group_check(const StepRunner& run_steps, const GroupCheckPlan& plan,
                                  const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                                  const ProgressFn& progress) {
    return confirm_suspects(locate_suspects(run_steps, plan, nodes, cohort_of, progress),
                            cohort_of);
}

}  // namespace preflight::controller
