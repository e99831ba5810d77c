// The judge: the one place preflight decides whether a measured figure is too low. Pure functions
// of the figures and the policy, called by the group rounds (to pick suspects and confirm them),
// by the evaluation (node-local figures such as intra-node NCCL busBW), and by the standalone
// agent (a node against its own baseline). Nothing else compares a figure with a median.
//
// The rule (ARCHITECTURE.md "The one rule"): a node fails when its figure is under an absolute
// floor, or under threshold_fraction x the median of its cohort's node figures. The reference is
// the median over nodes (one figure per node: for collectives the best group the node was in),
// never over groups. Below min_cohort measured nodes only the floor applies; without a floor such a
// node is inconclusive (`warn`, no action). When the cohort's MAD is above max_relative_mad x its
// median, the spread is too wide to tell a slow node from noise: a node under the median rule is
// inconclusive too (a node under the floor still fails: the floor needs no cohort). When the
// cohort median itself is under the floor, most of the cohort is slow and the median is no
// reference: nodes are judged against the floor alone. When a quarter or more of the cohort runs
// faster than median / threshold_fraction, the cohort is split in two and its median may sit in
// the slow part (pairs: with 30 % of nodes slow, half the pairs hold one): a node under
// threshold_fraction x the fast part's median is inconclusive, not a pass.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"

namespace preflight::core {

struct JudgePolicy {
    double threshold_fraction = 0.90;
    int min_cohort = 3;
    std::optional<double> floor;  // absolute floor for the metric, if configured
    // Noise bound on MAD / median; nullopt (or 0) judges any spread. The group rounds search for
    // suspects without it (re-pairing is harmless); the final judgement uses it.
    std::optional<double> max_relative_mad;
};

// What a verdict was judged against; recorded with every judged result.
struct Reference {
    std::string metric;   // e.g. busbw_gbps
    std::string basis;    // "cohort median", "floor", "baseline" or "none"
    std::string cohort;   // "sku=h100-sxm" or "(no sku label)"; empty for a baseline
    int cohort_size = 0;  // measured nodes in the cohort
    std::optional<double> median;
    std::optional<double> mad;
    std::optional<double> threshold;  // figure under which a node fails
    std::optional<double> floor;
    std::optional<double> baseline;  // the node's own earlier figure (standalone mode)
    // Nodes of the cohort faster than median / threshold_fraction: many of them mean the median
    // itself may be slow (most of the cohort degraded). Callers may warn about it.
    int above_median_band = 0;
    // The median of that fast band when it holds at least a quarter of the cohort (and 2 nodes):
    // a cohort split into a fast group and a slow one whose median sits in the slow group. A node
    // that passes the median rule but is under threshold_fraction x this figure is inconclusive,
    // never a pass, and a suspect for the group rounds to re-pair.
    std::optional<double> fast_band_median;
    // MAD / median above the policy's bound: nodes under the median rule are inconclusive.
    bool noisy = false;
};

struct Sample {
    std::string node;
    std::string cohort;  // value of the cohort label; empty when the node has none
    double value = 0.0;
};

struct Judgement {
    std::string node;
    double value = 0.0;
    Verdict verdict = Verdict::pass;        // pass, fail, or warn (inconclusive: see undecided)
    Undecided undecided = Undecided::none;  // inconclusive when the cohort could not judge it
    Reference reference;
    std::optional<double> fraction_of_median;
    std::string detail;  // why it is not a pass; empty for a pass
    std::string note;    // a caveat about the reference (median under the floor)
    // Worth measuring again with other partners: a fail, or under the fast band (see Reference).
    // The group rounds re-pair suspects; only a fail is ever acted on.
    bool suspect = false;
};

struct CohortJudgement {
    std::vector<Judgement> nodes;              // in the order of the samples
    std::map<std::string, Reference> cohorts;  // cohort value -> its reference
    const Reference* cohort_of(const std::string& cohort) const;
};

// Judges every sample against its cohort (samples with equal `cohort`). cohort_label names the
// label in the details ("sku"). Deterministic; the order of samples does not change verdicts.
CohortJudgement judge_cohorts(std::string_view metric, const std::vector<Sample>& samples,
                              const JudgePolicy& policy, std::string_view cohort_label);

// One node against its own earlier figure (the standalone prolog's baseline): fail under the
// floor, or under threshold_fraction x baseline. Without a floor or a baseline it passes with
// basis "none".
Judgement judge_against_baseline(std::string_view metric, double value,
                                 std::optional<double> baseline, const JudgePolicy& policy);

}  // namespace preflight::core
