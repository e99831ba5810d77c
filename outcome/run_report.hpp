// The canonical result of one run: what the report renderers, the action sinks and the exit code
// are computed from. Its JSON form (schema_version 1) is the document users and scripts read.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"

namespace preflight::outcome {

inline constexpr int k_schema_version = 1;

// One check's outcome on one node after evaluation against its cohort.
struct NodeCheck {
    std::string check;
    core::Verdict verdict = core::Verdict::error;
    core::Undecided undecided = core::Undecided::none;  // warn that decides nothing: why
    std::map<std::string, double> metrics;              // e.g. busbw_gbps, speed_mbps
    std::string detail;
    std::map<std::string, std::string> facts;  // the agent's facts (node.fingerprint)
    double seconds = 0.0;                      // how long the check ran on the node
    bool cached = false;                       // reused from the prolog's result cache, not run now
    std::optional<double> median;              // cohort median of the judged metric
    std::optional<double> mad;                 // cohort MAD of the judged metric
    std::optional<double> fraction_of_median;  // value / median
    std::optional<double> threshold;           // value under which the node fails
    std::optional<double> floor;               // absolute floor applied, if any
    // The judge's reference (core/judge.hpp), set on every result judged against a cohort:
    // "cohort median", "floor" or "none" (too few measured nodes), and the cohort it used.
    std::string reference_basis;
    std::string judged_metric;
    std::string cohort;
    std::optional<int> cohort_size;
};

// A node's own result as the report's check, before any cohort judgement: what the evaluator and
// the standalone prolog's ledger record both start from. Copies a const result, moves an rvalue
// (at 16 384 nodes the controller's results are moved, not copied, into the report).
template <class Result>
NodeCheck node_check_of(Result&& r) {
    NodeCheck c;
    c.check = std::forward<Result>(r).check;
    c.verdict = r.verdict;
    c.undecided = r.undecided;
    c.metrics = std::forward<Result>(r).metrics;
    c.detail = std::forward<Result>(r).detail;
    c.facts = std::forward<Result>(r).facts;
    c.seconds = r.seconds;
    return c;
}

struct NodeReport {
    std::string name;
    std::map<std::string, std::string> labels;
    bool reference = false;  // a known-good partner (--reference-nodes): never acted on
    core::Verdict verdict = core::Verdict::error;
    std::vector<std::string> reasons;  // one line per non-pass finding, most severe first
    std::vector<NodeCheck> checks;
};

// One collective run (a group in one round).
struct GroupRecord {
    int round = 0;
    std::string id;
    std::string check;
    std::vector<std::string> members;
    std::optional<double> busbw_gbps;  // group value: the slowest rank's busBW; empty on error
    std::map<std::string, double> rank_busbw_gbps;
    bool slow = false;  // under the threshold of its round
    std::string error;  // why the group produced no value
    double seconds = 0.0;
};

struct RoundSummary {
    int round = 0;
    std::string purpose;  // "node-local checks", "disjoint pairs", "re-pair suspects", "confirm"
    int steps = 0;        // node steps (round 0) or groups (rounds 1-3)
    double seconds = 0.0;
};

// One stage of the run (plan, launch, connect, node-local, rounds, confirm, judge, act) and the
// seconds it took.
struct StageTiming {
    std::string name;
    double seconds = 0.0;
};

struct Action {
    std::string node;
    std::string kind;  // "drain" (slurm) or "taint" (k8s)
    std::string sink;  // "slurm" or "k8s"
    std::string reason;
    std::vector<std::string> argv;  // slurm: the exact scontrol argv
    nlohmann::json patch;           // k8s: the node patch body
    bool applied = false;
    std::string error;  // why applying failed or was not attempted
    // The sink's breaker (nodes already marked by preflight in the partition or cluster) refused
    // it; the run then exits "breaker refused".
    bool refused_by_breaker = false;
};

struct Breaker {
    bool tripped = false;
    int candidates = 0;  // nodes in the run
    int planned = 0;     // nodes we would act on
    int allowed = 0;     // max(min_actions, floor(max_action_fraction * candidates))
    double max_action_fraction = 0.0;
    std::string message;
    bool forced = false;  // tripped, and the operator overrode it with --force (logged)
};

struct RunReport {
    int schema_version = k_schema_version;
    std::string preflight_version;  // the build that ran the run (core/build_info.hpp)
    std::string preflight_commit;
    std::string run_id;
    std::string started_at;   // RFC 3339 UTC
    std::string finished_at;  // RFC 3339 UTC
    double wall_seconds = 0.0;
    std::string launcher;
    bool apply = false;        // --apply given
    bool interrupted = false;  // stopped by a signal: verdicts partial, no action planned
    nlohmann::json config;     // effective evaluation/actions settings
    std::vector<NodeReport> nodes;
    std::vector<GroupRecord> groups;
    std::vector<RoundSummary> rounds;
    std::vector<StageTiming> stages;
    std::vector<Action> actions;
    Breaker breaker;
    // With a ledger: {"ledger": where, "kind", "recorded", counts, "self_history", "error"}.
    nlohmann::json ledger;
    int exit_code = 0;
};

void to_json(nlohmann::json& j, const RunReport& r);

}  // namespace preflight::outcome
