#include "core/inventory.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

std::string error_of(const std::string& text) {
    try {
        parse_inventory(text, "inv.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return {};
}

TEST(ValidNodeName, Rules) {
    EXPECT_TRUE(valid_node_name("gpu001"));
    EXPECT_TRUE(valid_node_name("a.b_c-d"));
    EXPECT_TRUE(valid_node_name("0"));
    EXPECT_TRUE(valid_node_name(std::string(64, 'x')));
    EXPECT_FALSE(valid_node_name(std::string(65, 'x')));
    EXPECT_FALSE(valid_node_name(""));
    EXPECT_FALSE(valid_node_name("-n1"));
    EXPECT_TRUE(valid_node_name("n-1"));
    EXPECT_FALSE(valid_node_name("n 1"));
    EXPECT_FALSE(valid_node_name("n;rm"));
    EXPECT_FALSE(valid_node_name("n/1"));
    EXPECT_FALSE(valid_node_name("n$(x)"));
    EXPECT_FALSE(valid_node_name("n\n1"));
    EXPECT_FALSE(valid_node_name("n\xc3\xa9"));
}

TEST(ParseInventory, FullEntries) {
    auto nodes = parse_inventory(R"(nodes:
  - name: h1
    netns: pf-h1
    address: 10.0.0.1
    labels: {sku: h100, rack: "7"}
  - name: 002
  - {name: h3, labels: {}}
)",
                                 "inv.yaml");
    ASSERT_EQ(nodes.size(), 3u);
    EXPECT_EQ(nodes[0].name, "h1");
    EXPECT_EQ(nodes[0].netns, "pf-h1");
    EXPECT_EQ(nodes[0].address, "10.0.0.1");
    EXPECT_THAT(nodes[0].labels, ElementsAre(Pair("rack", "7"), Pair("sku", "h100")));
    // Names are text as written: 002 is not the number 2.
    EXPECT_EQ(nodes[1].name, "002");
    EXPECT_TRUE(nodes[1].netns.empty());
    EXPECT_TRUE(nodes[1].address.empty());
    EXPECT_TRUE(nodes[2].labels.empty());
}

TEST(ParseInventory, Errors) {
    EXPECT_EQ(error_of("nodes:\n  - name: a\n    adress: 10.0.0.1\n"),
              "inv.yaml:3:5: unknown key 'adress' in 'nodes[0]' (allowed: name, netns, address, "
              "labels)");
    EXPECT_EQ(error_of("nodes: [{name: a}]\nhosts: []\n"),
              "inv.yaml:2:1: unknown key 'hosts' at top level (allowed: nodes)");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n  - name: b\n  - name: a\n"),
              "inv.yaml:4:11: duplicate node name 'a' (first at inv.yaml:2:11)");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n  - name: \"b c\"\n"),
              "inv.yaml:3:11: invalid node name 'b c' (allowed: letters, digits, '.', '_', '-'; at "
              "most 64 characters; not starting with '-')");
    EXPECT_THAT(error_of("nodes:\n  - name: -rf\n"),
                StartsWith("inv.yaml:2:11: invalid node name '-rf'"));
    EXPECT_THAT(error_of("nodes:\n  - name: " + std::string(65, 'n') + "\n"),
                StartsWith("inv.yaml:2:11: invalid node name"));
    EXPECT_EQ(error_of("nodes: []\n"), "inv.yaml:1:8: 'nodes' is empty");
    EXPECT_EQ(error_of("nodes:\n"), "inv.yaml:1:1: 'nodes' has no value");
    EXPECT_EQ(error_of("nodes: {a: 1}\n"), "inv.yaml:1:8: 'nodes' must be a list");
    EXPECT_EQ(error_of(""), "inv.yaml: inventory is empty (expected 'nodes: [...]')");
    EXPECT_EQ(error_of("nodes:\n  - netns: x\n"), "inv.yaml:2:5: 'nodes[0]' has no 'name'");
    EXPECT_EQ(error_of("nodes:\n  - h1\n"), "inv.yaml:2:5: 'nodes[0]' must be a map");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n    address: 10.0.0.256\n"),
              "inv.yaml:3:14: 'nodes[0].address' must be an IPv4 address, got '10.0.0.256'");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n    address: node-a.example\n"),
              "inv.yaml:3:14: 'nodes[0].address' must be an IPv4 address, got 'node-a.example'");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n    address: \"::1\"\n"),
              "inv.yaml:3:14: 'nodes[0].address' must be an IPv4 address, got '::1'");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n  - name: b\n    labels: [sku]\n"),
              "inv.yaml:4:13: 'nodes[1].labels' must be a map");
    EXPECT_EQ(error_of("nodes:\n  - name: a\n    labels: {sku: [a]}\n"),
              "inv.yaml:3:19: 'nodes[0].labels.sku' must be a string");
    EXPECT_THAT(error_of("nodes:\n  - name: a\n    netns: \"x y\"\n"),
                StartsWith("inv.yaml:3:12: invalid netns name 'x y'"));
    EXPECT_THAT(error_of("nodes:\n  - name: [a\n"), StartsWith("inv.yaml:3:1: YAML syntax error"));
}

TEST(InventoryFromHostlist, ExpandsAndValidates) {
    auto nodes = inventory_from_hostlist("gpu[01-03],login1");
    ASSERT_EQ(nodes.size(), 4u);
    EXPECT_EQ(nodes[0].name, "gpu01");
    EXPECT_EQ(nodes[2].name, "gpu03");
    EXPECT_EQ(nodes[3].name, "login1");
    EXPECT_TRUE(nodes[0].labels.empty());

    auto message = [](const std::string& hostlist) {
        try {
            inventory_from_hostlist(hostlist);
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        ADD_FAILURE() << "no ConfigError for " << hostlist;
        return std::string();
    };
    EXPECT_EQ(message("gpu[1-2"), "hostlist 'gpu[1-2': unbalanced '[' at 4");
    EXPECT_THAT(message("gpu1,bad:name"), HasSubstr("invalid node name 'bad:name'"));
    // A blank separates hosts, as in Slurm.
    EXPECT_EQ(inventory_from_hostlist("gpu1 gpu2").size(), 2u);
    EXPECT_EQ(message("n[1-2],n1"), "hostlist 'n[1-2],n1': duplicate node name 'n1'");
    EXPECT_EQ(message(""), "hostlist is empty");
}

TEST(LoadInventory, FileAndMissingFile) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight_inventory_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = (dir / "nodes.yaml").string();
    std::ofstream(path) << "nodes:\n  - name: a\n  - name: b\n";
    auto nodes = load_inventory(path);
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[1].name, "b");

    std::ofstream(path) << "nodes:\n  - name: a\n  - nam: b\n";
    EXPECT_THROW(
        {
            try {
                load_inventory(path);
            } catch (const ConfigError& e) {
                EXPECT_THAT(e.what(), StartsWith(path + ":3:5: unknown key 'nam'"));
                throw;
            }
        },
        ConfigError);
    const auto missing = (dir / "missing.yaml").string();
    EXPECT_THROW(
        {
            try {
                load_inventory(missing);
            } catch (const ConfigError& e) {
                EXPECT_EQ(std::string(e.what()),
                          missing + ": cannot read: No such file or directory");
                throw;
            }
        },
        ConfigError);
    std::filesystem::remove_all(dir);
}

TEST(Inventory, ReferenceNodesJoinTheCandidatesCohort) {
    auto nodes = parse_inventory(
        "nodes:\n  - {name: gpu01, labels: {sku: h100}}\n  - {name: gpu02, labels: {sku: h100}}\n",
        "inv.yaml");
    add_reference_nodes(nodes, "good[1-2],gpu02");
    ASSERT_EQ(nodes.size(), 4u);
    EXPECT_FALSE(nodes[0].reference);
    EXPECT_TRUE(nodes[1].reference);  // named in both: a partner, not a candidate
    EXPECT_EQ(nodes[2].name, "good1");
    EXPECT_TRUE(nodes[2].reference);
    EXPECT_EQ(nodes[2].labels.at("sku"), "h100");
    EXPECT_EQ(nodes[3].name, "good2");
}

TEST(Inventory, ReferenceNodesWithMixedCohortsGetNoLabels) {
    auto nodes = parse_inventory(
        "nodes:\n  - {name: a1, labels: {sku: a}}\n  - {name: b1, labels: {sku: b}}\n", "i.yaml");
    add_reference_nodes(nodes, "good1");
    EXPECT_TRUE(nodes[2].labels.empty());
}

TEST(Inventory, ReferenceNodesMustLeaveACandidateAndBeValid) {
    auto nodes = inventory_from_hostlist("gpu01");
    EXPECT_THROW(add_reference_nodes(nodes, "gpu01"), ConfigError);
    auto more = inventory_from_hostlist("gpu01");
    EXPECT_THROW(add_reference_nodes(more, "bad;name"), ConfigError);
    EXPECT_THROW(add_reference_nodes(more, "gpu[01-"), ConfigError);
}

}  // namespace
}  // namespace preflight::core
