// Nodes counted by verdict: the one place the pass / warn / fail / skip / error totals of a run are
// computed, so the JSON summary, every renderer and the exit code agree.
#pragma once

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

    int total() const { return pass + warn + fail + skip + error; }
    // The count for one verdict.
    int of(core::Verdict v) const;
};

VerdictTally tally(const std::vector<NodeReport>& nodes);
VerdictTally tally(const RunReport& report);

}  // namespace preflight::outcome
