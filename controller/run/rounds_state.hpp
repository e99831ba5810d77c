// The state of one inter-node check through its rounds: the groups run so far, each node's
// history (groups, partners, errors), and the judge over the figures so far. Internal to
// controller/run: group_rounds.cpp drives it through locate_suspects and confirm_suspects.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/run/group_check.hpp"
#include "controller/run/planner.hpp"
#include "core/judge.hpp"

namespace preflight::controller {

struct NodeHistory {
    std::vector<std::size_t> groups;  // indices into outcome.groups
    std::vector<std::string> errors;
    std::set<std::string> partners;
    bool lost = false;
    std::size_t skips = 0;    // results that were `skip` (prerequisite absent, e.g. no GPU)
    std::string skip_detail;  // the last such result's reason
};

class RoundsState {
  public:
    RoundsState(const StepRunner& run_steps, const GroupCheckPlan& plan, const CohortOf& cohort_of,
                const ProgressFn& progress);

    // Runs groups concurrently; returns indices of the new GroupRecords.
    std::vector<std::size_t> run(int round, const std::string& purpose,
                                 const std::vector<Members>& groups);

    // Each node's figure so far: the best group it was in (a group is only as fast as its
    // slowest member). Nodes whose own check reported a failure are not measured.
    std::map<std::string, double> figures() const;

    // The judge over the figures so far: the same rule and reference as the evaluation.
    core::CohortJudgement judge_now() const;

    // The nodes the judgement fails.
    static std::set<std::string> failing(const core::CohortJudgement& judged);
    // Worth another partner: failing, or under the fast part of a split cohort (core/judge.hpp).
    static std::set<std::string> suspects(const core::CohortJudgement& judged);

    // A group is slow when its figure is under the threshold of its first member's cohort.
    void mark_groups(const std::vector<std::size_t>& indices, const core::CohortJudgement& judged);

    // Says when the round-1 median is no good reference: under the floor (judged against the
    // floor instead), or many nodes well above it (the median itself may be slow).
    void note_reference(const core::CohortJudgement& judged);

    // Logs a note and keeps it for the report and for the details of the cohort's nodes.
    void add_note(const std::string& cohort, std::string note);

    struct Split {
        std::vector<std::string> candidates;  // need a good partner: failing or unmeasured
        std::vector<std::string> good;        // measured and not failing: partners
    };

    // Sorts the connected nodes for the next re-pairing; nodes already re-paired once are
    // neither candidates nor partners until they pass again. Suspects are candidates, never
    // partners.
    Split split(const std::vector<std::string>& nodes, const core::CohortJudgement& judged,
                const std::set<std::string>& tried) const;

    // The partners each node has already had, for the planner to avoid.
    std::map<std::string, std::set<std::string>> avoid(const std::vector<std::string>& nodes) const;

    bool group_slow(std::size_t idx) const { return m_outcome.groups[idx].slow; }

    bool group_ok(std::size_t idx) const {
        return m_outcome.groups[idx].busbw_gbps.has_value() && !m_outcome.groups[idx].slow;
    }

    // One result per node from its groups and the final judgement (inconsistent: normal in a
    // re-pairing; confirmed: slow with two good partners; failing: what the judgement fails),
    // with the cohort's notes; the state is spent afterwards.
    GroupCheckOutcome finish(const std::vector<std::string>& nodes,
                             const std::set<std::string>& inconsistent,
                             const std::set<std::string>& confirmed,
                             const std::set<std::string>& failing);

    const NodeHistory* history(const std::string& node) const;

  private:
    // Adds the GroupRecord of members to the outcome and one step request per member; owner
    // gets (group index, rank) per request. Returns the group's index.
    std::size_t open_group(int round, const Members& members, std::vector<StepRequest>& requests,
                           std::vector<std::pair<std::size_t, int>>& owner);
    // One rank's step outcome into its group's record and its node's history.
    void record_step(std::size_t group, const StepOutcome& step);
    // The group's time, and its figure once every rank reported one.
    void close_group(std::size_t idx, double seconds);
    // The result of one node that ran in at least one group.
    core::CheckResult measured_result(const std::string& node, const NodeHistory& history,
                                      const std::set<std::string>& inconsistent,
                                      const std::set<std::string>& confirmed,
                                      const std::set<std::string>& failing) const;
    // "; note: ..." on each node's detail for the notes of its cohort (or of all cohorts).
    void append_notes();

    StepRunner m_run_steps;
    GroupCheckPlan m_plan;
    CohortOf m_cohort_of;
    ProgressFn m_progress;
    GroupCheckOutcome m_outcome;
    std::map<std::string, NodeHistory> m_history;
    std::map<std::string, std::string> m_failed_data;
    std::map<std::string, std::vector<std::string>> m_notes_by_cohort;
};

}  // namespace preflight::controller
