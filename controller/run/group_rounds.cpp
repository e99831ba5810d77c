#include "controller/run/group_rounds.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/run/planner.hpp"
#include "core/stats.hpp"

namespace preflight::controller {
namespace {

using Clock = std::chrono::steady_clock;

struct NodeHistory {
    std::vector<std::size_t> groups;  // indices into outcome.groups
    std::vector<std::string> errors;
    std::set<std::string> partners;
    bool lost = false;
    std::size_t skips = 0;    // results that were `skip` (prerequisite absent, e.g. no GPU)
    std::string skip_detail;  // the last such result's reason
};

class Rounds {
  public:
    Rounds(const StepRunner& run_steps, const GroupCheckPlan& plan, const CohortOf& cohort_of,
           const ProgressFn& progress)
        : m_run_steps(run_steps), m_plan(plan), m_cohort_of(cohort_of), m_progress(progress) {}

    // Runs groups concurrently; returns indices of the new GroupRecords.
    std::vector<std::size_t> run(int round, const std::string& purpose,
                                 const std::vector<Members>& groups) {
        std::vector<std::size_t> indices;
        if (groups.empty()) {
            return indices;
        }
        auto started = Clock::now();
        std::vector<StepRequest> requests;
        std::vector<std::pair<std::size_t, int>> owner;  // request -> (group index, rank)
        for (std::size_t g = 0; g < groups.size(); ++g) {
            outcome::GroupRecord record;
            record.round = round;
            record.id = fmt::format("r{}.g{}", round, m_outcome.groups.size());
            record.check = m_plan.check;
            record.members = groups[g];
            m_outcome.groups.push_back(record);
            indices.push_back(m_outcome.groups.size() - 1);
            for (std::size_t r = 0; r < groups[g].size(); ++r) {
                StepRequest req;
                req.node = groups[g][r];
                req.check = m_plan.check;
                req.params = m_plan.params;
                req.deadline_s = m_plan.step_deadline_s;
                req.group = core::msg::Group{record.id, static_cast<int>(r), groups[g]};
                requests.push_back(std::move(req));
                owner.emplace_back(indices.back(), static_cast<int>(r));
            }
        }
        std::string what = fmt::format("round {} ({}): {} groups", round, purpose, groups.size());
        if (m_progress) {
            m_progress(what, 0, requests.size());
        }
        auto deadline =
            Clock::now() + std::chrono::milliseconds(static_cast<long>(
                               (m_plan.step_deadline_s + m_plan.controller_slack_s) * 1000));
        auto outcomes = m_run_steps(requests, deadline, [&](std::size_t done, std::size_t total) {
            if (m_progress) {
                m_progress(what, done, total);
            }
        });
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            auto& record = m_outcome.groups[owner[i].first];
            const auto& node = outcomes[i].node;
            auto& history = m_history[node];
            history.groups.push_back(owner[i].first);
            for (const auto& m : record.members) {
                if (m != node) {
                    history.partners.insert(m);
                }
            }
            if (outcomes[i].lost) {
                history.lost = true;
            }
            const auto& result = outcomes[i].result;
            auto metric = result.metrics.find(m_plan.metric);
            if (result.verdict == core::Verdict::pass && metric != result.metrics.end()) {
                record.rank_busbw_gbps[node] = metric->second;
            } else {
                std::string err =
                    fmt::format("{}: {} {}", node, core::to_string(result.verdict), result.detail);
                record.error = record.error.empty() ? err : record.error + "; " + err;
                history.errors.push_back(fmt::format(
                    "{} with {}: {}", record.id, fmt::join(record.members, "+"), result.detail));
                if (result.verdict == core::Verdict::fail) {
                    m_failed_data[node] = result.detail;
                }
                if (result.verdict == core::Verdict::skip) {
                    ++history.skips;
                    history.skip_detail = result.detail;
                }
            }
        }
        double seconds = std::chrono::duration<double>(Clock::now() - started).count();
        for (auto idx : indices) {
            auto& record = m_outcome.groups[idx];
            record.seconds = seconds;
            if (record.error.empty() && record.rank_busbw_gbps.size() == record.members.size()) {
                // The group is as fast as its slowest rank (the check already reports the max
                // time over ranks, so these agree; min keeps a disagreeing agent honest).
                double v = record.rank_busbw_gbps.begin()->second;
                for (const auto& [n, b] : record.rank_busbw_gbps) {
                    v = std::min(v, b);
                }
                record.busbw_gbps = v;
            }
        }
        m_outcome.rounds.push_back(
            outcome::RoundSummary{round, purpose, static_cast<int>(groups.size()), seconds});
        return indices;
    }

    // Marks slow groups against the per-cohort reference; returns the slow indices.
    std::vector<std::size_t> mark_slow(const std::vector<std::size_t>& indices) {
        std::vector<std::optional<double>> values;
        std::vector<double> reference;
        for (auto idx : indices) {
            values.push_back(m_outcome.groups[idx].busbw_gbps);
            reference.push_back(reference_for(m_outcome.groups[idx].members.front()));
        }
        std::vector<std::size_t> slow;
        for (auto i : slow_groups(values, reference, m_plan.threshold_fraction)) {
            m_outcome.groups[indices[i]].slow = true;
            slow.push_back(indices[i]);
        }
        return slow;
    }

    // Reference per cohort: the median of round-1 group figures of that cohort (all groups when
    // the cohort has none).
    void set_reference(const std::vector<std::size_t>& indices) {
        std::map<std::string, std::vector<double>> by_cohort;
        std::vector<double> all;
        for (auto idx : indices) {
            const auto& g = m_outcome.groups[idx];
            if (g.busbw_gbps) {
                by_cohort[m_cohort_of(g.members.front())].push_back(*g.busbw_gbps);
                all.push_back(*g.busbw_gbps);
            }
        }
        for (const auto& [cohort, values] : by_cohort) {
            m_reference[cohort] = checked_reference(cohort, values, true);
        }
        m_global_reference = all.empty() ? 0.0 : checked_reference("", all, false);
    }

    // The median of a cohort's round-1 groups, unless the median itself has moved because most of
    // the cohort is slow: under the floor it is replaced by the floor (slow = under the floor);
    // without a floor, an upper mode well above the median is reported, since then it is the
    // median that may be slow.
    double checked_reference(const std::string& cohort, const std::vector<double>& values,
                             bool say_so) {
        double med = core::median(values);
        std::string name = cohort.empty() ? std::string("all nodes") : "cohort '" + cohort + "'";
        if (m_plan.floor && med < *m_plan.floor) {
            if (say_so) {
                add_note(cohort,
                         fmt::format("{}: the median of round-1 groups ({:.4g}) is under the floor "
                                     "{:.4g}: most of the cohort is slow, so groups were judged "
                                     "against the floor instead of the median",
                                     name, med, *m_plan.floor));
            }
            return *m_plan.floor / m_plan.threshold_fraction;
        }
        auto fast = std::count_if(values.begin(), values.end(),
                                  [&](double v) { return v * m_plan.threshold_fraction > med; });
        // 5 %: with 75 % of nodes slow only 1 pair in 16 has two healthy members.
        if (say_so && values.size() >= 8 &&
            static_cast<double>(fast) >= 0.05 * static_cast<double>(values.size())) {
            add_note(cohort,
                     fmt::format("{}: {} of {} round-1 groups are faster than the median "
                                 "({:.4g}) / {:.2f}: the median itself may be slow (most of the "
                                 "cohort slow?); configure evaluation.floors for {} to judge "
                                 "against an absolute figure",
                                 name, fast, values.size(), med, m_plan.threshold_fraction,
                                 m_plan.check));
        }
        return med;
    }

    void add_note(const std::string& cohort, std::string note) {
        spdlog::warn("{}", note);
        m_notes_by_cohort[cohort].push_back(note);
        m_outcome.notes.push_back(std::move(note));
    }

    double reference_for(const std::string& node) const {
        auto it = m_reference.find(m_cohort_of(node));
        return it != m_reference.end() ? it->second : m_global_reference;
    }

    bool group_ok(std::size_t idx) const {
        return m_outcome.groups[idx].busbw_gbps.has_value() && !m_outcome.groups[idx].slow;
    }

    GroupCheckOutcome finish(const std::vector<std::string>& nodes,
                             const std::set<std::string>& inconsistent,
                             const std::set<std::string>& confirmed) {
        for (const auto& node : nodes) {
            core::CheckResult r;
            r.check = m_plan.check;
            auto it = m_history.find(node);
            if (it == m_history.end() || it->second.groups.empty()) {
                r.verdict = core::Verdict::skip;
                r.detail = "no partner: a group check needs at least two connected nodes";
                m_outcome.per_node[node] = r;
                continue;
            }
            const auto& history = it->second;
            std::optional<double> best;
            std::vector<std::string> trail;
            for (auto idx : history.groups) {
                const auto& g = m_outcome.groups[idx];
                std::vector<std::string> others;
                for (const auto& m : g.members) {
                    if (m != node) {
                        others.push_back(m);
                    }
                }
                if (g.busbw_gbps) {
                    best = best ? std::max(*best, *g.busbw_gbps) : *g.busbw_gbps;
                    trail.push_back(fmt::format("{} with {}: {:.4g}{}", g.id,
                                                fmt::join(others, "+"), *g.busbw_gbps,
                                                g.slow ? " (slow)" : ""));
                } else {
                    trail.push_back(
                        fmt::format("{} with {}: no value", g.id, fmt::join(others, "+")));
                }
            }
            bool cleared = false;
            for (auto idx : history.groups) {
                cleared = cleared || group_ok(idx);
            }
            if (auto f = m_failed_data.find(node); f != m_failed_data.end()) {
                r.verdict = core::Verdict::fail;
                r.detail = f->second;
            } else if (best && !cleared && confirmed.count(node) == 0) {
                // Slow so far, but never measured against enough good partners to tell whether
                // it or its partner is slow: no verdict, and so no action, on that evidence.
                r.verdict = core::Verdict::error;
                r.metrics[m_plan.metric] = *best;
                r.detail = fmt::format(
                    "unconfirmed suspect: slow, but re-pairing with good "
                    "partners did not complete; {}",
                    fmt::join(trail, "; "));
                if (!history.errors.empty()) {
                    r.detail += fmt::format("; errors: {}", fmt::join(history.errors, "; "));
                }
            } else if (best) {
                r.verdict = inconsistent.count(node) ? core::Verdict::warn : core::Verdict::pass;
                r.metrics[m_plan.metric] = *best;
                r.metrics["groups"] = static_cast<double>(history.groups.size());
                r.detail = (inconsistent.count(node)
                                ? "inconsistent: slow in one re-pairing, normal in another; "
                                : std::string()) +
                           fmt::format("{}", fmt::join(trail, "; "));
            } else if (history.skips == history.groups.size() && !history.lost) {
                // Every group this node was in skipped on it (no GPU, not under MPI): the check
                // does not apply here, which is not an error; the other checks are judged as usual.
                r.verdict = core::Verdict::skip;
                r.detail = history.skip_detail;
            } else {
                r.verdict = core::Verdict::error;
                r.detail =
                    fmt::format("no successful measurement: {}", fmt::join(history.errors, "; "));
            }
            m_outcome.per_node[node] = r;
        }
        for (auto& [node, r] : m_outcome.per_node) {
            auto notes = m_notes_by_cohort.find(m_cohort_of(node));
            if (notes == m_notes_by_cohort.end()) {
                notes = m_notes_by_cohort.find("");
            }
            if (notes != m_notes_by_cohort.end()) {
                r.detail += fmt::format("; note: {}", fmt::join(notes->second, "; "));
            }
        }
        return std::move(m_outcome);
    }

    const NodeHistory* history(const std::string& node) const {
        auto it = m_history.find(node);
        return it == m_history.end() ? nullptr : &it->second;
    }

  private:
    const StepRunner& m_run_steps;
    const GroupCheckPlan& m_plan;
    const CohortOf& m_cohort_of;
    const ProgressFn& m_progress;
    GroupCheckOutcome m_outcome;
    std::map<std::string, NodeHistory> m_history;
    std::map<std::string, std::string> m_failed_data;
    std::map<std::string, double> m_reference;
    double m_global_reference = 0.0;
    std::map<std::string, std::vector<std::string>> m_notes_by_cohort;
};

}  // namespace

GroupCheckOutcome run_group_check(const StepRunner& run_steps, const GroupCheckPlan& plan,
                                  const std::vector<std::string>& nodes, const CohortOf& cohort_of,
                                  const ProgressFn& progress) {
    Rounds rounds(run_steps, plan, cohort_of, progress);

    // Round 1: every node in a disjoint pair, all at once.
    auto r1 = rounds.run(1, "disjoint pairs", plan_pairs(nodes, cohort_of, plan.topology_of));
    rounds.set_reference(r1);
    auto slow1 = rounds.mark_slow(r1);

    std::vector<std::string> good;
    std::vector<std::string> suspects;    // members of slow groups
    std::vector<std::string> unmeasured;  // partners of a lost agent: need another partner
    std::set<std::size_t> slow_set(slow1.begin(), slow1.end());
    // Classify nodes from their round-1 history.
    for (const auto& node : nodes) {
        const auto* h = rounds.history(node);
        if (h == nullptr || h->groups.empty() || h->lost) {
            continue;
        }
        auto idx = h->groups.front();
        if (rounds.group_ok(idx)) {
            good.push_back(node);
        } else if (slow_set.count(idx) != 0) {
            suspects.push_back(node);
        } else {
            unmeasured.push_back(node);
        }
    }

    // Round 2: each node of a slow pair (and each partner of a lost agent) with a distinct good
    // node, which tells which end is slow. Waves only when suspects outnumber good partners.
    std::vector<std::string> candidates = suspects;
    candidates.insert(candidates.end(), unmeasured.begin(), unmeasured.end());
    std::vector<std::string> still_slow;
    std::set<std::string> inconsistent;
    std::set<std::string> confirmed;
    int wave = 0;
    while (!candidates.empty() && !good.empty() && wave < 3) {
        std::map<std::string, std::set<std::string>> avoid;
        for (const auto& c : candidates) {
            avoid[c] = rounds.history(c)->partners;
        }
        // A partner that lost its agent in an earlier wave is no partner.
        std::erase_if(good, [&](const std::string& n) { return rounds.history(n)->lost; });
        auto plan2 = plan_repairs(candidates, good, avoid, cohort_of);
        auto r2 =
            rounds.run(2, wave == 0 ? "re-pair suspects" : "re-pair suspects (more)", plan2.groups);
        auto slow2 = rounds.mark_slow(r2);
        std::set<std::size_t> slow2_set(slow2.begin(), slow2.end());
        for (std::size_t i = 0; i < r2.size(); ++i) {
            const auto& suspect = plan2.groups[i].front();
            if (slow2_set.count(r2[i]) != 0) {
                still_slow.push_back(suspect);
            } else if (rounds.group_ok(r2[i])) {
                good.push_back(suspect);  // cleared: the other end of its first pair was slow
            }
        }
        candidates = plan2.unpaired;
        ++wave;
    }
    for (const auto& c : candidates) {
        spdlog::warn("{}: no good partner was free to re-pair it with", c);
    }

    // Round 3: confirm each remaining suspect with another good partner before any action.
    if (!still_slow.empty()) {
        std::map<std::string, std::set<std::string>> avoid;
        for (const auto& s : still_slow) {
            avoid[s] = rounds.history(s)->partners;
        }
        std::erase_if(good, [&](const std::string& n) { return rounds.history(n)->lost; });
        auto plan3 = plan_repairs(still_slow, good, avoid, cohort_of);
        auto r3 = rounds.run(3, "confirm suspects", plan3.groups);
        auto slow3 = rounds.mark_slow(r3);
        std::set<std::size_t> slow3_set(slow3.begin(), slow3.end());
        for (std::size_t i = 0; i < r3.size(); ++i) {
            if (rounds.group_ok(r3[i])) {
                inconsistent.insert(plan3.groups[i].front());
            } else if (slow3_set.count(r3[i]) != 0) {
                confirmed.insert(plan3.groups[i].front());  // slow with two good partners
            }
        }
    }
    return rounds.finish(nodes, inconsistent, confirmed);
}

}  // namespace preflight::controller
