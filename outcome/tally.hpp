// Nodes counted by verdict: the one place the pass / warn / fail / skip / error totals of a run are
// computed, so the JSON summary, every renderer and the exit code agree.
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

struct VerdictTally {
    int pass = 0;
    int warn = 0;
    int fail = 0;
    int skip = 0;
    int error = 0;
    // Nodes with a result that decides nothing (core::Undecided), counted apart from the verdicts:
    // they drive the exit code (inconclusive 4, incomplete 6) and every report names them.
    int inconclusive = 0;
    int incomplete = 0;

    int total() const { return pass + warn + fail + skip + error; }
    // The count for one verdict.
    int of(core::Verdict v) const;
};

// Whether any of the node's checks is undecided in that way.
bool has_undecided(const NodeReport& node, core::Undecided kind);

// The node's first check with verdict fail; nullptr when none failed.
const NodeCheck* first_failing_check(const NodeReport& node);

VerdictTally tally(const std::vector<NodeReport>& nodes);
VerdictTally tally(const RunReport& report);

// The plain sentences every report prints about results that decide nothing: one for the
// inconclusive nodes and one for the incomplete ones (empty when there are none), each naming the
// nodes and saying that no action was taken on them.
std::vector<std::string> undecided_notices(const RunReport& report);

}  // namespace preflight::outcome
