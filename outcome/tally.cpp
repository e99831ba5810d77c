#include "outcome/tally.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/hostlist.hpp"

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

bool has_undecided(const NodeReport& node, core::Undecided kind) {
    return std::any_of(node.checks.begin(), node.checks.end(),
                       [kind](const NodeCheck& c) { return c.undecided == kind; });
}

const NodeCheck* first_failing_check(const NodeReport& node) {
    for (const auto& c : node.checks) {
        if (c.verdict == core::Verdict::fail) {
            return &c;
        }
    }
    return nullptr;
}

VerdictTally tally(const std::vector<NodeReport>& nodes) {
    VerdictTally t;
    for (const auto& n : nodes) {
        t.inconclusive += has_undecided(n, core::Undecided::inconclusive) ? 1 : 0;
        t.incomplete += has_undecided(n, core::Undecided::incomplete) ? 1 : 0;
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

std::vector<std::string> undecided_notices(const RunReport& report) {
    std::vector<std::string> inconclusive;
    std::vector<std::string> incomplete;
    for (const auto& n : report.nodes) {
        if (has_undecided(n, core::Undecided::inconclusive)) {
            inconclusive.push_back(n.name);
        }
        if (has_undecided(n, core::Undecided::incomplete)) {
            incomplete.push_back(n.name);
        }
    }
    std::vector<std::string> out;
    if (!inconclusive.empty()) {
        out.push_back(fmt::format(
            "INCONCLUSIVE: {} node(s) could not be judged (their cohort was too small or too "
            "noisy for a sound median): {}. No action was taken on them.",
            inconclusive.size(), core::compress_hostlist(inconclusive)));
    }
    if (!incomplete.empty()) {
        out.push_back(fmt::format(
            "INCOMPLETE: {} node(s) had no partner for a collective check, so it did not run: {}. "
            "Not a pass; give known-good partners with --reference-nodes.",
            incomplete.size(), core::compress_hostlist(incomplete)));
    }
    return out;
}

}  // namespace preflight::outcome
