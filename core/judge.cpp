#include "core/judge.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/stats.hpp"

namespace preflight::core {
namespace {

std::string cohort_name(const std::string& key, std::string_view label) {
    return key.empty() ? fmt::format("(no {} label)", label) : fmt::format("{}={}", label, key);
}

// The reference of one cohort from its node figures.
Reference cohort_reference(std::string_view metric, const std::string& name,
                           const std::vector<double>& values, const JudgePolicy& policy) {
    Reference ref;
    ref.metric = std::string(metric);
    ref.cohort = name;
    ref.cohort_size = static_cast<int>(values.size());
    ref.floor = policy.floor;
    const bool enough = ref.cohort_size >= policy.min_cohort && !values.empty();
    if (!enough) {
        ref.basis = policy.floor ? "floor" : "none";
        ref.threshold = policy.floor;
        return ref;
    }
    const double med = median(values);
    ref.median = med;
    ref.mad = mad(values);
    std::vector<double> fast;
    for (double v : values) {
        if (v * policy.threshold_fraction > med) {
            fast.push_back(v);
        }
    }
    ref.above_median_band = static_cast<int>(fast.size());
    if (fast.size() >= 2 && 4 * fast.size() >= values.size()) {
        ref.fast_band_median = median(fast);
    }
    if (policy.max_relative_mad && *policy.max_relative_mad > 0.0 && med > 0.0) {
        ref.noisy = *ref.mad / med > *policy.max_relative_mad;
    }
    if (policy.floor && med < *policy.floor) {
        // Most of the cohort is slow: the median moved under the floor and is no reference.
        ref.basis = "floor";
        ref.threshold = policy.floor;
    } else {
        ref.basis = "cohort median";
        // The figure under which a node fails: the median rule, or the floor where it is higher.
        ref.threshold = std::max(policy.threshold_fraction * med, policy.floor.value_or(0.0));
    }
    return ref;
}

Judgement judge_one(const Sample& s, const Reference& ref, const JudgePolicy& policy,
                    std::string_view label, const std::string& cohort_key) {
    Judgement j;
    j.node = s.node;
    j.value = s.value;
    j.reference = ref;
    const auto& metric = ref.metric;
    if (ref.median) {
        j.fraction_of_median = *ref.median > 0 ? s.value / *ref.median : 0.0;
    }
    if (ref.floor && s.value < *ref.floor) {
        j.verdict = Verdict::fail;
        j.detail = fmt::format("{} {:.4g} is under the floor {:.4g}", metric, s.value, *ref.floor);
    } else if (ref.basis == "cohort median" && s.value < policy.threshold_fraction * *ref.median) {
        const std::string measured =
            fmt::format("{} {:.4g} is {:.0f}% of the {} median {:.4g} (threshold {:.0f}%)", metric,
                        s.value, 100.0 * *j.fraction_of_median, ref.cohort, *ref.median,
                        100.0 * policy.threshold_fraction);
        if (ref.noisy) {
            j.verdict = Verdict::warn;
            j.undecided = Undecided::inconclusive;
            j.detail = fmt::format(
                "inconclusive: {}, but the cohort is too noisy to judge (MAD {:.4g} is {:.0f}% of "
                "the median, above the bound {:.0f}%): no action",
                measured, *ref.mad, 100.0 * *ref.mad / *ref.median,
                100.0 * policy.max_relative_mad.value_or(0.0));
        } else {
            j.verdict = Verdict::fail;
            j.detail = measured;
        }
    } else if (ref.basis == "cohort median" && ref.fast_band_median &&
               s.value < policy.threshold_fraction * *ref.fast_band_median) {
        j.verdict = Verdict::warn;
        j.undecided = Undecided::inconclusive;
        j.detail = fmt::format(
            "inconclusive: {} {:.4g} passes the median rule ({:.0f}% of the {} median {:.4g}), but "
            "{} of {} nodes run at {:.0f}% of the median or more (their median {:.4g}): the median "
            "may be slow, with much of the cohort degraded; no action (configure "
            "evaluation.floors to judge against an absolute figure)",
            metric, s.value, 100.0 * *j.fraction_of_median, ref.cohort, *ref.median,
            ref.above_median_band, ref.cohort_size, 100.0 / policy.threshold_fraction,
            *ref.fast_band_median);
    } else if (ref.basis == "none") {
        j.verdict = Verdict::warn;
        j.undecided = Undecided::inconclusive;
        j.detail = fmt::format(
            "inconclusive: {} has {} measured node(s), fewer than min_cohort {}, and no floor is "
            "configured: not judged, no action",
            cohort_name(cohort_key, label), ref.cohort_size, policy.min_cohort);
    }
    j.suspect =
        j.verdict == Verdict::fail || (ref.basis == "cohort median" && ref.fast_band_median &&
                                       s.value < policy.threshold_fraction * *ref.fast_band_median);
    if (ref.median && ref.basis == "floor") {
        j.note = fmt::format(
            "the {} median {:.4g} is under the floor {:.4g} (most of the cohort is slow): judged "
            "against the floor only",
            ref.cohort, *ref.median, *ref.floor);
    }
    return j;
}

}  // namespace

const Reference* CohortJudgement::cohort_of(const std::string& cohort) const {
    auto it = cohorts.find(cohort);
    return it == cohorts.end() ? nullptr : &it->second;
}

CohortJudgement judge_cohorts(std::string_view metric, const std::vector<Sample>& samples,
                              const JudgePolicy& policy, std::string_view cohort_label) {
    std::map<std::string, std::vector<double>> values;
    for (const auto& s : samples) {
        values[s.cohort].push_back(s.value);
    }
    CohortJudgement out;
    for (const auto& [key, v] : values) {
        out.cohorts[key] = cohort_reference(metric, cohort_name(key, cohort_label), v, policy);
    }
    out.nodes.reserve(samples.size());
    for (const auto& s : samples) {
        out.nodes.push_back(judge_one(s, out.cohorts.at(s.cohort), policy, cohort_label, s.cohort));
    }
    return out;
}

Judgement judge_against_baseline(std::string_view metric, double value,
                                 std::optional<double> baseline, const JudgePolicy& policy) {
    Judgement j;
    j.value = value;
    j.reference.metric = std::string(metric);
    j.reference.floor = policy.floor;
    j.reference.basis = policy.floor ? "floor" : "none";
    j.reference.threshold = policy.floor;
    if (policy.floor && value < *policy.floor) {
        j.verdict = Verdict::fail;
        j.detail = fmt::format("{} {:.4g} is under the floor {:.4g}", metric, value, *policy.floor);
        return j;
    }
    if (baseline && *baseline > 0.0) {
        j.reference.basis = "baseline";
        j.reference.baseline = baseline;
        j.reference.threshold = policy.threshold_fraction * *baseline;
        if (value < *j.reference.threshold) {
            j.verdict = Verdict::fail;
            j.detail = fmt::format(
                "{} {:.4g} is {:.0f}% of its baseline {:.4g} (threshold {:.0f}%)", metric, value,
                100.0 * value / *baseline, *baseline, 100.0 * policy.threshold_fraction);
        }
    }
    return j;
}

}  // namespace preflight::core
