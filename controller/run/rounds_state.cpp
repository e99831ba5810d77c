// RoundsState (rounds_state.hpp): the bookkeeping of one check's rounds.
#include "controller/run/rounds_state.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/checked_number.hpp"

namespace preflight::controller {

namespace {

using Clock = std::chrono::steady_clock;

// A node's groups as the detail lists them, its best figure and its time in the check.
struct Trail {
    std::optional<double> best;
    std::vector<std::string> lines;  // "r1.g0 with b: 12.3 (slow)"
    double seconds = 0.0;
};

Trail trail_of(const std::string& node, const NodeHistory& history,
               const std::vector<outcome::GroupRecord>& groups) {
    Trail trail;
    for (auto idx : history.groups) {
        const auto& g = groups[idx];
        std::vector<std::string> others;
        for (const auto& m : g.members) {
            if (m != node) {
                others.push_back(m);
            }
        }
        // The node's time in the check: its longest step (a round's steps run at once; the
        // ledger's planner learns a round's time from it).
        trail.seconds = std::max(trail.seconds, g.seconds);
        if (g.busbw_gbps) {
            trail.best = trail.best ? std::max(*trail.best, *g.busbw_gbps) : *g.busbw_gbps;
            trail.lines.push_back(fmt::format("{} with {}: {:.4g}{}", g.id, fmt::join(others, "+"),
                                              *g.busbw_gbps, g.slow ? " (slow)" : ""));
        } else {
            trail.lines.push_back(
                fmt::format("{} with {}: no value", g.id, fmt::join(others, "+")));
        }
    }
    return trail;
}

}  // namespace

RoundsState::RoundsState(const StepRunner& run_steps, const GroupCheckPlan& plan,
                         const CohortOf& cohort_of, const ProgressFn& progress)
    : m_run_steps(run_steps), m_plan(plan), m_cohort_of(cohort_of), m_progress(progress) {}

std::size_t RoundsState::open_group(int round, const Members& members,
                                    std::vector<StepRequest>& requests,
                                    std::vector<std::pair<std::size_t, int>>& owner) {
    outcome::GroupRecord record;
    record.round = round;
    record.id = fmt::format("r{}.g{}", round, m_outcome.groups.size());
    record.check = m_plan.check;
    record.members = members;
    m_outcome.groups.push_back(record);
    const std::size_t index = m_outcome.groups.size() - 1;
    for (std::size_t r = 0; r < members.size(); ++r) {
        StepRequest req;
        req.node = members[r];
        req.check = m_plan.check;
        req.params = m_plan.params;
        req.deadline_s = m_plan.step_deadline_s;
        req.group = core::msg::Group{record.id, static_cast<int>(r), members};
        requests.push_back(std::move(req));
        owner.emplace_back(index, static_cast<int>(r));
    }
    return index;
}

void RoundsState::record_step(std::size_t group, const StepOutcome& step) {
    auto& record = m_outcome.groups[group];
    const auto& node = step.node;
    auto& history = m_history[node];
    history.groups.push_back(group);
    for (const auto& m : record.members) {
        if (m != node) {
            history.partners.insert(m);
        }
    }
    if (step.lost) {
        history.lost = true;
    }
    const auto& result = step.result;
    auto metric = result.metrics.find(m_plan.metric);
    if (result.verdict == core::Verdict::pass && metric != result.metrics.end()) {
        record.rank_busbw_gbps[node] = metric->second;
        return;
    }
    std::string err =
        fmt::format("{}: {} {}", node, core::to_string(result.verdict), result.detail);
    record.error = record.error.empty() ? err : record.error + "; " + err;
    history.errors.push_back(
        fmt::format("{} with {}: {}", record.id, fmt::join(record.members, "+"), result.detail));
    if (result.verdict == core::Verdict::fail) {
        m_failed_data[node] = result.detail;
    }
    if (result.verdict == core::Verdict::skip) {
        ++history.skips;
        history.skip_detail = result.detail;
    }
}

void RoundsState::close_group(std::size_t idx, double seconds) {
    auto& record = m_outcome.groups[idx];
    record.seconds = seconds;
    if (record.error.empty() && record.rank_busbw_gbps.size() == record.members.size()) {
        // The group is as fast as its slowest rank (the check already reports the max time over
        // ranks, so these agree; min keeps a disagreeing agent honest).
        double v = record.rank_busbw_gbps.begin()->second;
        for (const auto& [n, b] : record.rank_busbw_gbps) {
            v = std::min(v, b);
        }
        record.busbw_gbps = v;
    }
}

std::vector<std::size_t> RoundsState::run(int round, const std::string& purpose,
                                          const std::vector<Members>& groups) {
    std::vector<std::size_t> indices;
    if (groups.empty()) {
        return indices;
    }
    auto started = Clock::now();
    std::vector<StepRequest> requests;
    std::vector<std::pair<std::size_t, int>> owner;  // request -> (group index, rank)
    for (const auto& members : groups) {
        indices.push_back(open_group(round, members, requests, owner));
    }
    std::string what = fmt::format("round {} ({}): {} groups", round, purpose, groups.size());
    if (m_progress) {
        m_progress(what, 0, requests.size());
    }
    auto deadline =
        Clock::now() + core::clamp_to_millis(m_plan.step_deadline_s + m_plan.controller_slack_s);
    auto outcomes = m_run_steps(requests, deadline, [&](std::size_t done, std::size_t total) {
        if (m_progress) {
            m_progress(what, done, total);
        }
    });
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        record_step(owner[i].first, outcomes[i]);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    for (auto idx : indices) {
        close_group(idx, seconds);
    }
    m_outcome.rounds.push_back(
        outcome::RoundSummary{round, purpose, static_cast<int>(groups.size()), seconds});
    return indices;
}

std::map<std::string, double> RoundsState::figures() const {
    std::map<std::string, double> out;
    for (const auto& [node, history] : m_history) {
        if (m_failed_data.count(node) != 0) {
            continue;
        }
        for (auto idx : history.groups) {
            if (const auto& v = m_outcome.groups[idx].busbw_gbps) {
                out[node] = out.count(node) ? std::max(out[node], *v) : *v;
            }
        }
    }
    return out;
}

core::CohortJudgement RoundsState::judge_now() const {
    std::vector<core::Sample> samples;
    for (const auto& [node, value] : figures()) {
        samples.push_back({node, m_cohort_of(node), value});
    }
    return core::judge_cohorts(m_plan.metric, samples, m_plan.policy(), m_plan.cohort_label);
}

std::set<std::string> RoundsState::failing(const core::CohortJudgement& judged) {
    std::set<std::string> out;
    for (const auto& j : judged.nodes) {
        if (j.verdict == core::Verdict::fail) {
            out.insert(j.node);
        }
    }
    return out;
}

std::set<std::string> RoundsState::suspects(const core::CohortJudgement& judged) {
    std::set<std::string> out;
    for (const auto& j : judged.nodes) {
        if (j.suspect) {
            out.insert(j.node);
        }
    }
    return out;
}

void RoundsState::mark_groups(const std::vector<std::size_t>& indices,
                              const core::CohortJudgement& judged) {
    for (auto idx : indices) {
        auto& g = m_outcome.groups[idx];
        const auto* ref = judged.cohort_of(m_cohort_of(g.members.front()));
        g.slow = g.busbw_gbps && ref != nullptr && ref->basis != "none" && ref->threshold &&
                 *g.busbw_gbps < *ref->threshold;
    }
}

void RoundsState::note_reference(const core::CohortJudgement& judged) {
    for (const auto& [cohort, ref] : judged.cohorts) {
        if (!ref.median) {
            continue;
        }
        if (ref.basis == "floor") {
            add_note(cohort, fmt::format("{}: the median of round-1 figures ({:.4g}) is under "
                                         "the floor {:.4g}: most of the cohort is slow, so "
                                         "nodes were judged against the floor instead",
                                         ref.cohort, *ref.median, *ref.floor));
        } else if (ref.cohort_size >= 16 && ref.above_median_band >= 0.05 * ref.cohort_size) {
            // 5 %: with 75 % of nodes slow only 1 pair in 16 has two healthy members.
            add_note(cohort, fmt::format("{}: {} of {} nodes are faster than the median ({:.4g}) / "
                                         "{:.2f}: the median itself may be slow (most of the "
                                         "cohort slow?); configure evaluation.floors for {} to "
                                         "judge against an absolute figure",
                                         ref.cohort, ref.above_median_band, ref.cohort_size,
                                         *ref.median, m_plan.threshold_fraction, m_plan.check));
        }
    }
}

void RoundsState::add_note(const std::string& cohort, std::string note) {
    spdlog::warn("{}", note);
    m_notes_by_cohort[cohort].push_back(note);
    m_outcome.notes.push_back(std::move(note));
}

RoundsState::Split RoundsState::split(const std::vector<std::string>& nodes,
                                      const core::CohortJudgement& judged,
                                      const std::set<std::string>& tried) const {
    Split out;
    const auto fails = suspects(judged);
    const auto measured = figures();
    for (const auto& node : nodes) {
        const auto* h = history(node);
        if (h != nullptr && h->lost) {
            continue;
        }
        const bool has_figure = measured.count(node) != 0;
        if (has_figure && fails.count(node) == 0) {
            out.good.push_back(node);
        } else if (tried.count(node) == 0 && m_failed_data.count(node) == 0) {
            out.candidates.push_back(node);
        }
    }
    return out;
}

std::map<std::string, std::set<std::string>> RoundsState::avoid(
    const std::vector<std::string>& nodes) const {
    std::map<std::string, std::set<std::string>> out;
    for (const auto& n : nodes) {
        if (const auto* h = history(n)) {
            out[n] = h->partners;
        }
    }
    return out;
}

core::CheckResult RoundsState::measured_result(const std::string& node, const NodeHistory& history,
                                               const std::set<std::string>& inconsistent,
                                               const std::set<std::string>& confirmed,
                                               const std::set<std::string>& failing) const {
    core::CheckResult r;
    r.check = m_plan.check;
    const Trail trail = trail_of(node, history, m_outcome.groups);
    r.seconds = trail.seconds;
    const auto& best = trail.best;
    if (auto f = m_failed_data.find(node); f != m_failed_data.end()) {
        r.verdict = core::Verdict::fail;
        r.detail = f->second;
    } else if (best && failing.count(node) != 0 && confirmed.count(node) == 0) {
        // Slow so far, but never measured against enough good partners to tell whether it or
        // its partner is slow: no verdict, and so no action, on that evidence.
        r.verdict = core::Verdict::error;
        r.metrics[m_plan.metric] = *best;
        r.detail = fmt::format(
            "unconfirmed suspect: slow, but re-pairing with good "
            "partners did not complete; {}",
            fmt::join(trail.lines, "; "));
        if (!history.errors.empty()) {
            r.detail += fmt::format("; errors: {}", fmt::join(history.errors, "; "));
        }
    } else if (best) {
        r.verdict = inconsistent.count(node) ? core::Verdict::warn : core::Verdict::pass;
        r.metrics[m_plan.metric] = *best;
        r.metrics["groups"] = static_cast<double>(history.groups.size());
        r.detail =
            (inconsistent.count(node) ? "inconsistent: slow in one re-pairing, normal in another; "
                                      : std::string()) +
            fmt::format("{}", fmt::join(trail.lines, "; "));
    } else if (history.skips == history.groups.size() && !history.lost) {
        // Every group this node was in skipped on it (no GPU, not under MPI): the check does not
        // apply here, which is not an error; the other checks are judged as usual.
        r.verdict = core::Verdict::skip;
        r.detail = history.skip_detail;
    } else {
        r.verdict = core::Verdict::error;
        r.detail = fmt::format("no successful measurement: {}", fmt::join(history.errors, "; "));
    }
    return r;
}

void RoundsState::append_notes() {
    for (auto& [node, r] : m_outcome.per_node) {
        auto notes = m_notes_by_cohort.find(m_cohort_of(node));
        if (notes == m_notes_by_cohort.end()) {
            notes = m_notes_by_cohort.find("");
        }
        if (notes != m_notes_by_cohort.end()) {
            r.detail += fmt::format("; note: {}", fmt::join(notes->second, "; "));
        }
    }
}

GroupCheckOutcome RoundsState::finish(const std::vector<std::string>& nodes,
                                      const std::set<std::string>& inconsistent,
                                      const std::set<std::string>& confirmed,
                                      const std::set<std::string>& failing) {
    for (const auto& node : nodes) {
        auto it = m_history.find(node);
        if (it != m_history.end() && !it->second.groups.empty()) {
            m_outcome.per_node[node] =
                measured_result(node, it->second, inconsistent, confirmed, failing);
            continue;
        }
        // Never a pass: the collective did not run. Known-good partners (--reference-nodes) let
        // a lone node be measured.
        core::CheckResult r;
        r.check = m_plan.check;
        r.verdict = core::Verdict::warn;
        r.undecided = core::Undecided::incomplete;
        r.detail =
            "incomplete: no partner: a group check needs at least two connected nodes "
            "(give known-good partners with --reference-nodes)";
        m_outcome.per_node[node] = r;
    }
    append_notes();
    return std::move(m_outcome);
}

const NodeHistory* RoundsState::history(const std::string& node) const {
    auto it = m_history.find(node);
    return it == m_history.end() ? nullptr : &it->second;
}

}  // namespace preflight::controller
