#include "outcome/tally.hpp"

namespace preflight::outcome {

int VerdictTally::of(core::Verdict v) const {
    switch (v) {
        case core::Verdict::pass:
            return pass;
        case core::Verdict::warn:
            return warn;
        case core::Verdict::fail:
            return fail;
        case core::Verdict::skip:
            return skip;
        case core::Verdict::error:
            return error;
    }
    return 0;
}

VerdictTally tally(const std::vector<NodeReport>& nodes) {
    VerdictTally t;
    for (const auto& n : nodes) {
        switch (n.verdict) {
            case core::Verdict::pass:
                ++t.pass;
                break;
            case core::Verdict::warn:
                ++t.warn;
                break;
            case core::Verdict::fail:
                ++t.fail;
                break;
            case core::Verdict::skip:
                ++t.skip;
                break;
            case core::Verdict::error:
                ++t.error;
                break;
        }
    }
    return t;
}

VerdictTally tally(const RunReport& report) {
    return tally(report.nodes);
}

}  // namespace preflight::outcome
