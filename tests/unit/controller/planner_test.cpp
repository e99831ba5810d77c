#include "controller/run/planner.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> names(std::size_t n, const std::string& prefix = "n") {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(prefix + std::to_string(i));
    }
    return out;
}

std::string same_cohort(const std::string&) {
    return "a100";
}

// The cohort is the part of the name before the first '-' ("h100-3" -> "h100").
std::string prefix_cohort(const std::string& node) {
    return node.substr(0, node.find('-'));
}

// Every node in exactly one group, groups of two or three (four only when a lone singleton
// joins a cohort's group of three).
void expect_partition(const std::vector<Members>& groups, const std::vector<std::string>& nodes) {
    std::map<std::string, int> seen;
    for (const auto& g : groups) {
        EXPECT_GE(g.size(), 2u);
        for (const auto& n : g) {
            ++seen[n];
        }
    }
    if (nodes.size() < 2) {
        EXPECT_THAT(groups, IsEmpty());
        return;
    }
    EXPECT_EQ(seen.size(), nodes.size());
    for (const auto& n : nodes) {
        EXPECT_EQ(seen[n], 1) << n;
    }
}

TEST(PlanPairs, EvenNodeCountMakesDisjointPairsInOrder) {
    auto groups = plan_pairs(names(6), same_cohort);
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_THAT(groups[0], ElementsAre("n0", "n1"));
    EXPECT_THAT(groups[1], ElementsAre("n2", "n3"));
    EXPECT_THAT(groups[2], ElementsAre("n4", "n5"));
}

TEST(PlanPairs, OddNodeCountMakesOneGroupOfThree) {
    auto groups = plan_pairs(names(7), same_cohort);
    ASSERT_EQ(groups.size(), 3u);
    int triples = 0;
    for (const auto& g : groups) {
        EXPECT_TRUE(g.size() == 2 || g.size() == 3);
        triples += g.size() == 3 ? 1 : 0;
    }
    EXPECT_EQ(triples, 1);
    expect_partition(groups, names(7));
    EXPECT_THAT(plan_pairs(names(3), same_cohort), ElementsAre(ElementsAre("n0", "n1", "n2")));
}

TEST(PlanPairs, ZeroOrOneNodeMakesNoGroups) {
    EXPECT_THAT(plan_pairs({}, same_cohort), IsEmpty());
    EXPECT_THAT(plan_pairs({"only"}, same_cohort), IsEmpty());
    EXPECT_THAT(plan_pairs({"only"}, prefix_cohort), IsEmpty());
}

TEST(PlanPairs, TwoNodesMakeOnePair) {
    EXPECT_THAT(plan_pairs({"a", "b"}, same_cohort), ElementsAre(ElementsAre("a", "b")));
}

TEST(PlanPairs, CohortsAreRespected) {
    std::vector<std::string> nodes = {"a-1", "b-1", "a-2", "b-2", "a-3", "b-3", "a-4", "b-4"};
    auto groups = plan_pairs(nodes, prefix_cohort);
    expect_partition(groups, nodes);
    ASSERT_EQ(groups.size(), 4u);
    for (const auto& g : groups) {
        for (const auto& n : g) {
            EXPECT_EQ(prefix_cohort(n), prefix_cohort(g.front()));
        }
    }
}

TEST(PlanPairs, OddCohortKeepsItsTripleWithinTheCohort) {
    std::vector<std::string> nodes = {"a-1", "a-2", "a-3", "b-1", "b-2"};
    auto groups = plan_pairs(nodes, prefix_cohort);
    expect_partition(groups, nodes);
    EXPECT_THAT(groups, ElementsAre(ElementsAre("a-1", "a-2", "a-3"), ElementsAre("b-1", "b-2")));
}

TEST(PlanPairs, SingletonCohortsArePooled) {
    std::vector<std::string> nodes = {"x-1", "a-1", "y-1", "a-2", "z-1", "w-1"};
    auto groups = plan_pairs(nodes, prefix_cohort);
    expect_partition(groups, nodes);
    EXPECT_THAT(groups, ElementsAre(ElementsAre("a-1", "a-2"), ElementsAre("x-1", "y-1"),
                                    ElementsAre("z-1", "w-1")));
}

TEST(PlanPairs, OddSingletonPoolMakesATriple) {
    std::vector<std::string> nodes = {"x-1", "y-1", "z-1"};
    auto groups = plan_pairs(nodes, prefix_cohort);
    EXPECT_THAT(groups, ElementsAre(ElementsAre("x-1", "y-1", "z-1")));
}

TEST(PlanPairs, LoneSingletonJoinsTheLastGroup) {
    std::vector<std::string> nodes = {"a-1", "a-2", "x-1"};
    auto groups = plan_pairs(nodes, prefix_cohort);
    expect_partition(groups, nodes);
    EXPECT_THAT(groups, ElementsAre(ElementsAre("a-1", "a-2", "x-1")));
}

TEST(PlanRepairs, EverySuspectGetsADistinctGoodPartner) {
    std::vector<std::string> suspects = {"s1", "s2", "s3"};
    std::vector<std::string> good = {"g1", "g2", "g3", "g4"};
    auto plan = plan_repairs(suspects, good, {}, same_cohort);
    EXPECT_THAT(plan.unpaired, IsEmpty());
    ASSERT_EQ(plan.groups.size(), 3u);
    std::set<std::string> partners;
    for (std::size_t i = 0; i < plan.groups.size(); ++i) {
        ASSERT_EQ(plan.groups[i].size(), 2u);
        EXPECT_EQ(plan.groups[i][0], suspects[i]);
        EXPECT_NE(std::find(good.begin(), good.end(), plan.groups[i][1]), good.end());
        partners.insert(plan.groups[i][1]);
    }
    EXPECT_EQ(partners.size(), 3u);
}

TEST(PlanRepairs, NeverAPartnerFromTheAvoidSet) {
    std::vector<std::string> suspects = {"s1", "s2"};
    std::vector<std::string> good = {"g1", "g2", "g3"};
    std::map<std::string, std::set<std::string>> avoid = {{"s1", {"g1", "g2"}}, {"s2", {"g3"}}};
    auto plan = plan_repairs(suspects, good, avoid, same_cohort);
    EXPECT_THAT(plan.unpaired, IsEmpty());
    EXPECT_THAT(plan.groups, ElementsAre(ElementsAre("s1", "g3"), ElementsAre("s2", "g1")));
}

TEST(PlanRepairs, AvoidSetCanLeaveASuspectUnpaired) {
    auto plan = plan_repairs({"s1"}, {"g1", "g2"}, {{"s1", {"g1", "g2"}}}, same_cohort);
    EXPECT_THAT(plan.groups, IsEmpty());
    EXPECT_THAT(plan.unpaired, ElementsAre("s1"));
}

TEST(PlanRepairs, SameCohortPreferred) {
    std::vector<std::string> suspects = {"b-s", "a-s"};
    std::vector<std::string> good = {"a-g1", "b-g1", "a-g2"};
    auto plan = plan_repairs(suspects, good, {}, prefix_cohort);
    EXPECT_THAT(plan.unpaired, IsEmpty());
    EXPECT_THAT(plan.groups, ElementsAre(ElementsAre("b-s", "b-g1"), ElementsAre("a-s", "a-g1")));
}

TEST(PlanRepairs, OtherCohortWhenTheOwnIsExhausted) {
    auto plan = plan_repairs({"a-s1", "a-s2"}, {"a-g", "b-g"}, {}, prefix_cohort);
    EXPECT_THAT(plan.unpaired, IsEmpty());
    EXPECT_THAT(plan.groups, ElementsAre(ElementsAre("a-s1", "a-g"), ElementsAre("a-s2", "b-g")));
}

TEST(PlanRepairs, UnpairedWhenPartnersRunOut) {
    auto plan = plan_repairs({"s1", "s2", "s3"}, {"g1"}, {}, same_cohort);
    EXPECT_THAT(plan.groups, ElementsAre(ElementsAre("s1", "g1")));
    EXPECT_THAT(plan.unpaired, ElementsAre("s2", "s3"));
    auto none = plan_repairs({"s1"}, {}, {}, same_cohort);
    EXPECT_THAT(none.groups, IsEmpty());
    EXPECT_THAT(none.unpaired, ElementsAre("s1"));
}

TEST(PlanRepairs, NoSuspectsNoGroups) {
    auto plan = plan_repairs({}, {"g1", "g2"}, {}, same_cohort);
    EXPECT_THAT(plan.groups, IsEmpty());
    EXPECT_THAT(plan.unpaired, IsEmpty());
}

TEST(PlanRepairs, NeverPairsASuspectWithItself) {
    auto plan = plan_repairs({"x"}, {"x"}, {}, same_cohort);
    EXPECT_THAT(plan.groups, IsEmpty());
    EXPECT_THAT(plan.unpaired, ElementsAre("x"));
}

TEST(PlanPairs, ACohortOfFiveDefersItsOddNodeWhenAsked) {
    std::vector<std::string> deferred;
    auto groups = plan_pairs(names(5), same_cohort, {}, &deferred);
    EXPECT_THAT(groups, ElementsAre(ElementsAre("n0", "n1"), ElementsAre("n2", "n3")));
    EXPECT_THAT(deferred, ElementsAre("n4"));
    // Seven nodes: a group of three holds under half the figures, so nothing is deferred.
    deferred.clear();
    EXPECT_EQ(plan_pairs(names(7), same_cohort, {}, &deferred).size(), 3u);
    EXPECT_THAT(deferred, IsEmpty());
}

// Properties over many random inventories and suspect sets.
TEST(PlannerProperty, RandomInventories) {
    std::mt19937 rng(20240601);
    for (int iteration = 0; iteration < 500; ++iteration) {
        std::size_t n = std::uniform_int_distribution<std::size_t>(0, 70)(rng);
        int cohort_count = std::uniform_int_distribution<int>(1, 5)(rng);
        std::vector<std::string> nodes;
        for (std::size_t i = 0; i < n; ++i) {
            int cohort = std::uniform_int_distribution<int>(0, cohort_count - 1)(rng);
            nodes.push_back("c" + std::to_string(cohort) + "-" + std::to_string(i));
        }
        SCOPED_TRACE("iteration " + std::to_string(iteration) + ", n " + std::to_string(n));

        auto groups = plan_pairs(nodes, prefix_cohort);
        expect_partition(groups, nodes);
        std::map<std::string, int> cohort_sizes;
        for (const auto& node : nodes) {
            ++cohort_sizes[prefix_cohort(node)];
        }
        for (const auto& g : groups) {
            EXPECT_LE(g.size(), 4u);
            // Groups mix cohorts only through pooled singletons.
            std::set<std::string> cohorts;
            for (const auto& m : g) {
                cohorts.insert(prefix_cohort(m));
            }
            if (cohorts.size() > 1) {
                int multi = 0;
                for (const auto& c : cohorts) {
                    multi += cohort_sizes[c] > 1 ? 1 : 0;
                }
                EXPECT_LE(multi, 1);
            }
        }
        if (cohort_count == 1 && n >= 2) {
            EXPECT_EQ(groups.size(), n / 2);
            for (const auto& g : groups) {
                EXPECT_LE(g.size(), 3u);
            }
        }

        // Suspects: a random subset; good: the rest.
        std::vector<std::string> suspects;
        std::vector<std::string> good;
        double bad_fraction = std::uniform_real_distribution<double>(0.0, 0.6)(rng);
        for (const auto& node : nodes) {
            (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < bad_fraction ? suspects : good)
                .push_back(node);
        }
        std::map<std::string, std::set<std::string>> avoid;
        for (const auto& s : suspects) {
            for (const auto& g : good) {
                if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) {
                    avoid[s].insert(g);
                }
            }
        }
        auto plan = plan_repairs(suspects, good, avoid, prefix_cohort);
        EXPECT_EQ(plan.groups.size() + plan.unpaired.size(), suspects.size());
        std::set<std::string> partners;
        std::set<std::string> covered;
        std::set<std::string> good_set(good.begin(), good.end());
        for (const auto& g : plan.groups) {
            ASSERT_EQ(g.size(), 2u);
            EXPECT_TRUE(good_set.count(g[1])) << g[1];
            EXPECT_TRUE(partners.insert(g[1]).second) << "partner used twice: " << g[1];
            EXPECT_TRUE(covered.insert(g[0]).second);
            EXPECT_EQ(avoid[g[0]].count(g[1]), 0u) << g[0] << " with avoided " << g[1];
        }
        for (const auto& u : plan.unpaired) {
            EXPECT_TRUE(covered.insert(u).second);
            // Unpaired only when no allowed partner was left.
            for (const auto& g : good) {
                EXPECT_TRUE(partners.count(g) != 0 || avoid[u].count(g) != 0)
                    << u << " left unpaired while " << g << " was free";
            }
        }
        EXPECT_EQ(covered.size(), suspects.size());
        // Same cohort whenever one was free at the time: checked by replaying the choices.
        std::set<std::string> used;
        for (const auto& g : plan.groups) {
            if (prefix_cohort(g[1]) != prefix_cohort(g[0])) {
                for (const auto& candidate : good) {
                    bool same = prefix_cohort(candidate) == prefix_cohort(g[0]);
                    EXPECT_FALSE(same && used.count(candidate) == 0 &&
                                 avoid[g[0]].count(candidate) == 0)
                        << g[0] << " paired across cohorts while " << candidate << " was free";
                }
            }
            used.insert(g[1]);
        }
    }
}

}  // namespace
}  // namespace preflight::controller
