// Slurm topology.conf parsing and topology-aware pairing (plan_pairs with a switch per node).
#include "controller/run/topology.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/run/planner.hpp"
#include "core/config.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SlurmTopology, LeavesPlaceNodesSpinesAreSkipped) {
    auto leaf = parse_slurm_topology(
        "# fat tree\n"
        "SwitchName=s1 Nodes=gpu[001-003] LinkSpeed=400\n"
        "SwitchName=s2 Nodes=gpu[004-005],gpu010\n"
        "\n"
        "SwitchName=spine Switches=s[1-2]\n");
    ASSERT_TRUE(leaf) << leaf.error().message;
    EXPECT_EQ(leaf->size(), 6u);
    EXPECT_EQ(leaf->at("gpu001"), "s1");
    EXPECT_EQ(leaf->at("gpu003"), "s1");
    EXPECT_EQ(leaf->at("gpu004"), "s2");
    EXPECT_EQ(leaf->at("gpu010"), "s2");
}

TEST(SlurmTopology, ErrorsNameTheLine) {
    auto bad_hostlist = parse_slurm_topology("SwitchName=s1 Nodes=gpu[001-003\n");
    ASSERT_FALSE(bad_hostlist);
    EXPECT_THAT(bad_hostlist.error().message, HasSubstr("line 1"));
    auto no_name = parse_slurm_topology("# c\nNodes=gpu1\n");
    ASSERT_FALSE(no_name);
    EXPECT_THAT(no_name.error().message, HasSubstr("line 2: no SwitchName"));
    auto twice = parse_slurm_topology("SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n");
    ASSERT_FALSE(twice);
    EXPECT_THAT(twice.error().message, HasSubstr("under both a and b"));
    auto not_kv = parse_slurm_topology("SwitchName=a gpu1\n");
    ASSERT_FALSE(not_kv);
    EXPECT_THAT(not_kv.error().message, HasSubstr("not KEY=VALUE"));
}

TEST(TopologyPairs, PairsStayUnderOneSwitch) {
    // Inventory order interleaves the racks; pairs must not.
    std::vector<std::string> nodes = {"a1", "b1", "a2", "b2", "a3", "b3", "a4", "b4"};
    auto groups = plan_pairs(
        nodes, [](const std::string&) { return std::string("sku"); },
        [](const std::string& n) { return n.substr(0, 1); });
    ASSERT_EQ(groups.size(), 4u);
    EXPECT_THAT(groups[0], ElementsAre("a1", "a2"));
    EXPECT_THAT(groups[1], ElementsAre("a3", "a4"));
    EXPECT_THAT(groups[2], ElementsAre("b1", "b2"));
    EXPECT_THAT(groups[3], ElementsAre("b3", "b4"));
}

TEST(TopologyPairs, OddSwitchesShareOneCrossSwitchPair) {
    std::vector<std::string> nodes = {"a1", "a2", "a3", "b1", "b2", "b3"};
    auto groups = plan_pairs(
        nodes, [](const std::string&) { return std::string("sku"); },
        [](const std::string& n) { return n.substr(0, 1); });
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_THAT(groups[0], ElementsAre("a1", "a2"));
    EXPECT_THAT(groups[1], ElementsAre("a3", "b1"));
    EXPECT_THAT(groups[2], ElementsAre("b2", "b3"));
}

TEST(TopologyPairs, WithoutTopologyTheOrderIsKept) {
    std::vector<std::string> nodes = {"a1", "b1", "a2", "b2"};
    auto groups = plan_pairs(nodes, [](const std::string&) { return std::string("sku"); });
    EXPECT_THAT(groups[0], ElementsAre("a1", "b1"));
}

TEST(TopologyConfig, KeysAreParsed) {
    auto cfg = core::parse_config(
        "evaluation: {topology_label: rack, topology_file: /etc/slurm/topology.conf}\n", "t.yaml",
        plugins::param_catalog());
    EXPECT_EQ(cfg.evaluation.topology_label, "rack");
    EXPECT_EQ(cfg.evaluation.topology_file, "/etc/slurm/topology.conf");
}

}  // namespace
}  // namespace preflight::controller
