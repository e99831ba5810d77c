#include "controller/run/self_history.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace preflight::controller {

namespace {

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

int add_self_history(std::vector<outcome::NodeReport>& nodes, const OwnHistory& history,
                     const core::SelfHistoryConfig& config) {
    if (config.drop_fraction <= 0.0)
        return 0;
    int flagged = 0;
    for (auto& node : nodes) {
        const auto h = history.find(node.name);
        if (h == history.end() || node.reference)
            continue;
        std::vector<std::string> findings;
        outcome::NodeCheck nc;
        nc.check = k_self_history_check;
        nc.verdict = core::Verdict::warn;
        for (const auto& c : node.checks) {
            // Only a figure judged and passed today: a fail or an undecided result says more
            // already, and an unjudged figure has no reference to set beside it.
            if (c.verdict != core::Verdict::pass || c.judged_metric.empty())
                continue;
            const auto value = c.metrics.find(c.judged_metric);
            const auto earlier = h->second.find(c.check);
            if (value == c.metrics.end() || earlier == h->second.end())
                continue;
            std::vector<double> samples = earlier->second;
            if (static_cast<int>(samples.size()) > config.max_samples)
                samples.resize(static_cast<std::size_t>(config.max_samples));
            if (static_cast<int>(samples.size()) < config.min_samples)
                continue;
            const double own = median_of(samples);
            if (own <= 0.0 || value->second >= (1.0 - config.drop_fraction) * own)
                continue;
            const double drop = 1.0 - value->second / own;
            std::string finding = fmt::format(
                "{}: {} {:.1f} is {:.0f} % under this node's own median {:.1f} of its last {} "
                "passing runs (limit {:.0f} %)",
                c.check, c.judged_metric, value->second, drop * 100.0, own, samples.size(),
                config.drop_fraction * 100.0);
            if (c.median)
                finding += fmt::format("; cohort median today {:.1f}", *c.median);
            findings.push_back(finding);
            nc.metrics[c.check + ".value"] = value->second;
            nc.metrics[c.check + ".own_median"] = own;
            nc.metrics[c.check + ".own_samples"] = static_cast<double>(samples.size());
            nc.metrics[c.check + ".drop_fraction"] = drop;
            if (c.median)
                nc.metrics[c.check + ".cohort_median"] = *c.median;
        }
        if (findings.empty())
            continue;
        ++flagged;
        // Most severe first: before any skip lines, as drift does.
        auto at = node.reasons.begin();
        while (at != node.reasons.end() && at->rfind("skip: ", 0) != 0)
            ++at;
        for (const auto& f : findings) {
            nc.detail += (nc.detail.empty() ? "" : "; ") + f;
            at = node.reasons.insert(at, "warn: self-history: " + f) + 1;
        }
        node.checks.push_back(std::move(nc));
        if (node.verdict == core::Verdict::pass || node.verdict == core::Verdict::skip)
            node.verdict = core::Verdict::warn;
    }
    return flagged;
}

}  // namespace preflight::controller
