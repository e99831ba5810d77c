// Properties of the localization rounds (run_group_check over the planner) on a simulated fabric,
// for randomized (N, d) from a fixed list of seeds plus the corner cases: odd N, more suspects than
// good partners, and a cohort where most nodes are slow (with and without a floor). A group runs at
// its slowest member's rate, as a ring all-reduce does.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "controller/run/group_rounds.hpp"
#include "controller/run/planner.hpp"

namespace {

using namespace preflight::controller;
using preflight::core::Verdict;

// Thousands of "no good partner" warnings would bury the failures.
class QuietLogs : public ::testing::Environment {
  public:
    void SetUp() override { spdlog::set_level(spdlog::level::err); }
};
const auto* const k_quiet = ::testing::AddGlobalTestEnvironment(new QuietLogs);

constexpr double k_good = 100.0;
constexpr double k_bad = 50.0;

struct Fabric {
    std::map<std::string, double> rate;
    std::vector<std::vector<Members>> batches;  // the groups of each run_steps call

    StepRunner runner() {
        return
            [this](const std::vector<StepRequest>& requests, std::chrono::steady_clock::time_point,
                   const std::function<void(std::size_t, std::size_t)>&) {
                std::vector<Members> groups;
                std::set<std::string> ids;
                std::vector<StepOutcome> out;
                for (const auto& req : requests) {
                    if (ids.insert(req.group->id).second) {
                        groups.push_back(req.group->members);
                    }
                    double slowest = 1e300;
                    for (const auto& m : req.group->members) {
                        slowest = std::min(slowest, rate.at(m));
                    }
                    StepOutcome o;
                    o.node = req.node;
                    o.result.check = req.check;
                    o.result.verdict = Verdict::pass;
                    o.result.metrics["busbw_gbps"] = slowest;
                    out.push_back(o);
                }
                batches.push_back(groups);
                return out;
            };
    }
};

GroupCheckPlan plan(std::optional<double> floor = std::nullopt) {
    GroupCheckPlan p;
    p.check = "collective.gloo_allreduce";
    p.params = nlohmann::json::object();
    p.step_deadline_s = 10;
    p.controller_slack_s = 1;
    p.threshold_fraction = 0.9;
    p.floor = floor;
    return p;
}

struct Case {
    std::vector<std::string> nodes;
    std::set<std::string> bad;
};

Case make_case(std::size_t n, std::size_t d, std::mt19937& rng) {
    Case c;
    for (std::size_t i = 0; i < n; ++i) {
        c.nodes.push_back("n" + std::to_string(i));
    }
    auto shuffled = c.nodes;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    c.bad.insert(shuffled.begin(), shuffled.begin() + static_cast<long>(d));
    return c;
}

Fabric fabric_for(const Case& c, std::mt19937& rng) {
    Fabric f;
    std::normal_distribution<double> noise(1.0, 0.01);
    for (const auto& n : c.nodes) {
        f.rate[n] = (c.bad.count(n) ? k_bad : k_good) * noise(rng);
    }
    return f;
}

// Properties that hold for every inventory, whatever the number of bad nodes.
void expect_structure(const Fabric& f, const GroupCheckOutcome& o, const Case& c) {
    // No node in two groups of one batch; groups of two or three.
    for (std::size_t b = 0; b < f.batches.size(); ++b) {
        std::set<std::string> seen;
        for (const auto& g : f.batches[b]) {
            EXPECT_GE(g.size(), 2u);
            EXPECT_LE(g.size(), 3u);
            for (const auto& m : g) {
                EXPECT_TRUE(seen.insert(m).second) << m << " twice in batch " << b;
            }
        }
    }
    // Round 1 covers every node once, except the odd node of a cohort of five, which waits for
    // a partner that passed (round 2).
    ASSERT_FALSE(f.batches.empty());
    std::size_t covered = 0;
    for (const auto& g : f.batches.front()) {
        covered += g.size();
    }
    EXPECT_EQ(covered, c.nodes.size() == 5 ? 4u : c.nodes.size());
    // Re-pairings and confirmations: a suspect and a partner that had passed before, never one it
    // was measured with, so every partner of a suspect is distinct.
    std::set<std::string> known_good;
    std::map<std::string, std::set<std::string>> partners;
    std::size_t idx = 0;
    for (std::size_t b = 0; b < f.batches.size(); ++b) {
        for (const auto& g : f.batches[b]) {
            const auto& record = o.groups.at(idx++);
            ASSERT_EQ(record.members, g);
            if (b > 0) {
                ASSERT_EQ(g.size(), 2u);
                EXPECT_TRUE(known_good.count(g[1])) << g[1] << " used as a partner before passing";
                EXPECT_TRUE(partners[g[0]].insert(g[1]).second)
                    << g[0] << " measured twice with " << g[1];
            }
            for (const auto& m : g) {
                for (const auto& other : g) {
                    if (other != m && b == 0) {
                        partners[m].insert(other);
                    }
                }
            }
        }
        // Known good after this batch: members of groups that were measured and not slow.
        for (std::size_t i = idx - f.batches[b].size(); i < idx; ++i) {
            if (o.groups[i].busbw_gbps && !o.groups[i].slow) {
                known_good.insert(o.groups[i].members.begin(), o.groups[i].members.end());
            }
        }
    }
    // Fail closed: a bad node never ends with a healthy figure, and a good node never ends with a
    // slow figure and a clean verdict (it is cleared, or an unconfirmed suspect: error).
    for (const auto& n : c.nodes) {
        const auto& r = o.per_node.at(n);
        if (r.verdict == Verdict::error) {
            continue;
        }
        ASSERT_EQ(r.verdict, Verdict::pass) << n << ": " << r.detail;
        double figure = r.metrics.at("busbw_gbps");
        if (c.bad.count(n)) {
            EXPECT_LT(figure, 0.6 * k_good) << n;
        } else {
            EXPECT_GT(figure, 0.9 * k_good) << n;
        }
    }
}

std::set<int> group_rounds(const GroupCheckOutcome& o) {
    std::set<int> r;
    for (const auto& g : o.groups) {
        r.insert(g.round);
    }
    return r;
}

const CohortOf k_one_cohort = [](const std::string&) { return std::string("sku"); };

// d << N: every bad node localized (slow figure, pass for the evaluator to fail), every good one
// cleared, in at most three group rounds (round 0 is node-local) and far fewer tests than
// all-pairs.
TEST(LocalizationProperty, FewBadNodesAreFoundInBoundedRounds) {
    for (unsigned seed : {1u, 2u, 3u, 5u, 8u, 13u, 21u, 34u, 55u, 89u, 144u, 233u}) {
        std::mt19937 rng(seed);
        std::size_t n = std::uniform_int_distribution<std::size_t>(16, 4096)(rng);
        std::size_t d =
            std::uniform_int_distribution<std::size_t>(0, std::max<std::size_t>(1, n / 32))(rng);
        SCOPED_TRACE("seed " + std::to_string(seed) + " N " + std::to_string(n) + " d " +
                     std::to_string(d));
        auto c = make_case(n, d, rng);
        auto f = fabric_for(c, rng);
        auto o = run_group_check(f.runner(), plan(), c.nodes, k_one_cohort, {});
        expect_structure(f, o, c);
        EXPECT_LE(f.batches.size(), 3u);
        EXPECT_LE(group_rounds(o).size(), 3u);
        EXPECT_LE(o.groups.size(), n / 2 + 4 * d);
        EXPECT_LT(o.groups.size(), n * (n - 1) / 2);
        for (const auto& node : c.nodes) {
            EXPECT_EQ(o.per_node.at(node).verdict, Verdict::pass)
                << node << ": " << o.per_node.at(node).detail;
        }
        EXPECT_THAT(o.notes, ::testing::IsEmpty());
    }
}

TEST(LocalizationProperty, OddNodeCountsPutEveryNodeInAGroup) {
    // (N = 3 is one group: no reference to tell its members apart without a floor.)
    for (std::size_t n : {5u, 7u, 9u, 33u, 1025u}) {
        std::mt19937 rng(static_cast<unsigned>(n));
        auto c = make_case(n, 1, rng);
        auto f = fabric_for(c, rng);
        auto o = run_group_check(f.runner(), plan(), c.nodes, k_one_cohort, {});
        SCOPED_TRACE("N " + std::to_string(n));
        expect_structure(f, o, c);
        // A slow triple makes three suspects; under 8 nodes they can outnumber the good partners
        // and re-pairing takes a second wave.
        EXPECT_LE(f.batches.size(), n < 8 ? 4u : 3u);
    }
}

// More suspects than good partners: re-pairing runs in waves, and whoever is left unpaired is an
// unconfirmed suspect (error), never a pass on a slow figure and never a fail by association.
TEST(LocalizationProperty, MoreSuspectsThanGoodPartners) {
    for (unsigned seed : {4u, 9u, 16u, 25u, 36u}) {
        std::mt19937 rng(seed);
        std::size_t n = std::uniform_int_distribution<std::size_t>(8, 64)(rng);
        std::size_t d = n / 2 + std::uniform_int_distribution<std::size_t>(0, n / 4)(rng);
        SCOPED_TRACE("seed " + std::to_string(seed) + " N " + std::to_string(n) + " d " +
                     std::to_string(d));
        auto c = make_case(n, d, rng);
        auto f = fabric_for(c, rng);
        auto o = run_group_check(f.runner(), plan(k_good * 0.8), c.nodes, k_one_cohort, {});
        expect_structure(f, o, c);
        EXPECT_LE(f.batches.size(), 5u);  // pairs, at most three waves of re-pairs, confirm
    }
}

// Most of the cohort slow: the median of round-1 groups is itself slow. With a floor, groups are
// judged against the floor and the bad nodes are still localized; the outcome says so.
TEST(LocalizationProperty, MostlySlowCohortFallsBackToTheFloor) {
    std::mt19937 rng(77);
    auto c = make_case(400, 300, rng);
    auto f = fabric_for(c, rng);
    auto o = run_group_check(f.runner(), plan(k_good * 0.8), c.nodes, k_one_cohort, {});
    expect_structure(f, o, c);
    ASSERT_THAT(o.notes, ::testing::SizeIs(1));
    EXPECT_THAT(o.notes.front(), ::testing::HasSubstr("under the floor"));
    std::size_t bad_low = 0;
    for (const auto& b : c.bad) {
        const auto& r = o.per_node.at(b);
        bad_low += r.verdict == Verdict::pass ? 1 : 0;
        EXPECT_THAT(r.detail, ::testing::HasSubstr("judged against the floor"));
    }
    EXPECT_GT(bad_low, 0u);  // localized where good partners sufficed; the rest are errors
}

TEST(LocalizationProperty, MostlySlowCohortWithoutAFloorSaysTheMedianMayBeSlow) {
    std::mt19937 rng(78);
    auto c = make_case(400, 300, rng);
    auto f = fabric_for(c, rng);
    auto o = run_group_check(f.runner(), plan(), c.nodes, k_one_cohort, {});
    ASSERT_THAT(o.notes, ::testing::SizeIs(1));
    EXPECT_THAT(o.notes.front(), ::testing::HasSubstr("the median itself may be slow"));
    EXPECT_THAT(o.per_node.begin()->second.detail,
                ::testing::HasSubstr("configure evaluation.floors"));
}

}  // namespace
