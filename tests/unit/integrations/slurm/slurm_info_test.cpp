// Slurm readings before a launch (outcome/slurm_info.hpp) on saved outputs of the real tools
// (tests/fixtures/slurm/README.md): node records as JSON (scontrol 25.11, sinfo 22.05) and as the
// -o text of 22.05 with Gres, the GPUs in Gres strings and per node of a job, `scontrol show
// config` and the prolog budget judged against it. Expected values are read off the fixtures.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "integrations/slurm/slurm_info.hpp"
#include "tests/unit/saved_scontrol.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::slurm_fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(SlurmNodesJson, ScontrolOfSlurm25) {
    auto nodes = parse_slurm_nodes_json(slurm_fixture("show_node_json_25.11.json"));
    ASSERT_TRUE(nodes) << nodes.error().message;
    ASSERT_EQ(nodes->size(), 1u);
    const auto& n = nodes->front();
    EXPECT_EQ(n.name, "compute-0");
    EXPECT_EQ(n.addr, "10.216.61.171");
    EXPECT_EQ(n.state, "DOWN+DYNAMIC_NORM");
    EXPECT_TRUE(n.down());
    EXPECT_EQ(n.reason, "Not responding");
    EXPECT_EQ(n.comment, "");
    EXPECT_EQ(n.gres, "");
    EXPECT_THAT(n.partitions, ElementsAre("compute"));
}

TEST(SlurmNodesJson, SinfoOfSlurm22) {
    auto nodes = parse_slurm_nodes_json(slurm_fixture("sinfo_json_22.05.json"));
    ASSERT_TRUE(nodes) << nodes.error().message;
    ASSERT_EQ(nodes->size(), 3u);
    EXPECT_EQ((*nodes)[0].state, "IDLE");
    EXPECT_EQ((*nodes)[1].name, "node02");
    EXPECT_EQ((*nodes)[1].state, "IDLE+DRAIN");
    EXPECT_TRUE((*nodes)[1].drained());
    EXPECT_EQ((*nodes)[1].reason, "ops: bad dimm (ticket 42)");
    EXPECT_EQ((*nodes)[1].gres, "gpu:4");
    EXPECT_EQ((*nodes)[1].addr, "127.0.0.1");
    EXPECT_EQ((*nodes)[2].state, "DOWN");
    EXPECT_EQ((*nodes)[2].reason, "cable check");
}

TEST(SlurmNodesJson, WhatIsNotANodeListIsAnError) {
    EXPECT_FALSE(parse_slurm_nodes_json(slurm_fixture("show_node_json_22.05_unsupported.txt")));
    EXPECT_FALSE(parse_slurm_nodes_json(""));
    EXPECT_FALSE(parse_slurm_nodes_json("{\"nodes\": 3}"));
    auto odd = parse_slurm_nodes_json(
        R"({"nodes": [1, {"state": ["IDLE"]}, {"name": "n1", "state": 7, "partitions": [2]}]})");
    ASSERT_TRUE(odd);
    ASSERT_EQ(odd->size(), 1u);  // nameless objects and non-objects skipped
    EXPECT_EQ(odd->front().state, "");
    EXPECT_THAT(odd->front().partitions, IsEmpty());
}

TEST(SlurmNodesText, GresOfTheInstalledSlurm) {
    auto nodes = parse_scontrol_nodes(slurm_fixture("show_node_o_gres_drain_down.txt"));
    ASSERT_EQ(nodes.size(), 3u);
    for (const auto& n : nodes) {
        EXPECT_EQ(n.gres, "gpu:4") << n.name;
    }
    EXPECT_EQ(nodes[1].state, "IDLE+DRAIN");
    EXPECT_EQ(nodes[1].reason, "ops: bad dimm (ticket 42)");
    EXPECT_EQ(nodes[2].state, "DOWN");
    EXPECT_EQ(nodes[2].reason, "cable check");
    // Nodes without GPUs print Gres=(null).
    EXPECT_EQ(parse_scontrol_nodes("NodeName=n1 Gres=(null) State=IDLE\n").at(0).gres, "");
}

TEST(GresGpuCount, CountsOnlyGpus) {
    EXPECT_EQ(gres_gpu_count("gpu:4"), 4);
    EXPECT_EQ(gres_gpu_count("gpu:h100:8(S:0-1)"), 8);
    // slurmrestd(8) of 24.11, EXAMPLES: a node's "gres".
    EXPECT_EQ(gres_gpu_count("gpu:fake1:1(S:0),gpu:fake2:1(S:0)"), 2);
    EXPECT_EQ(gres_gpu_count("gpu:a100:2(IDX:0,2),nic:1,gpu:v100:1"), 3);
    EXPECT_EQ(gres_gpu_count("gpu"), 1);
    EXPECT_EQ(gres_gpu_count("gpu:h100"), 1);
    EXPECT_EQ(gres_gpu_count("gpu:0(IDX:N/A)"), 0);
    EXPECT_EQ(gres_gpu_count("nic:1,mps:200"), 0);
    EXPECT_EQ(gres_gpu_count("gpus:4"), 0);
    EXPECT_EQ(gres_gpu_count(""), 0);
    EXPECT_EQ(gres_gpu_count("(null)"), 0);
    EXPECT_EQ(gres_gpu_count("gpu:99999999999"), 0);  // not a count Slurm prints
}

TEST(JobNodeGpus, FromScontrolShowJobDetail) {
    EXPECT_THAT(parse_job_node_gpus(slurm_fixture("show_job_d_gres.txt")),
                ElementsAre(::testing::Pair("node01", 2), ::testing::Pair("node02", 2),
                            ::testing::Pair("node03", 2)));
    EXPECT_THAT(parse_job_node_gpus(slurm_fixture("show_job_d_nogres.txt")),
                ElementsAre(::testing::Pair("node01", 0), ::testing::Pair("node02", 0)));
    EXPECT_THAT(
        parse_job_node_gpus("     Nodes=a[1-2] CPU_IDs=0-3 Mem=0 GRES=gpu:h100:8(IDX:0-7)\n"
                            "     Nodes=b1 CPU_IDs=0 Mem=0 GRES=gpu:4(IDX:0-3)\n"),
        ElementsAre(::testing::Pair("a1", 8), ::testing::Pair("a2", 8), ::testing::Pair("b1", 4)));
}

TEST(ScontrolConfig, KeysAndTimes) {
    const auto noprolog = parse_scontrol_config(slurm_fixture("show_config_noprolog.txt"));
    EXPECT_EQ(noprolog.at("PrologEpilogTimeout"), "65534");
    EXPECT_EQ(noprolog.at("BatchStartTimeout"), "10 sec");
    EXPECT_EQ(noprolog.at("Prolog"), "(null)");
    EXPECT_EQ(noprolog.at("SuspendTime"), "INFINITE");
    EXPECT_EQ(noprolog.at("DefMemPerNode"), "UNLIMITED");
    EXPECT_EQ(noprolog.at("SLURM_VERSION"), "22.05.8");
    EXPECT_EQ(noprolog.count("Configuration"), 0u);
    const auto prolog = parse_scontrol_config(slurm_fixture("show_config_prolog15.txt"));
    EXPECT_EQ(prolog.at("PrologEpilogTimeout"), "15");
    EXPECT_EQ(prolog.at("PrologFlags"), "Alloc");
    EXPECT_EQ(prolog.at("Prolog"), "/bin/true");

    EXPECT_EQ(*slurm_seconds("10 sec"), 10);
    EXPECT_EQ(*slurm_seconds("60"), 60);
    EXPECT_EQ(*slurm_seconds("2 min"), 120);
    EXPECT_TRUE(std::isinf(*slurm_seconds("65534")));
    EXPECT_TRUE(std::isinf(*slurm_seconds("65535")));
    EXPECT_TRUE(std::isinf(*slurm_seconds("UNLIMITED")));
    EXPECT_TRUE(std::isinf(*slurm_seconds("INFINITE")));
    for (const char* bad : {"", "(null)", "10 hours", "sec", "1234567890123", "-5"}) {
        EXPECT_FALSE(slurm_seconds(bad)) << bad;
    }
}

TEST(PrologBudget, JudgedAgainstTheClustersTimeouts) {
    const auto noprolog = parse_scontrol_config(slurm_fixture("show_config_noprolog.txt"));
    // 20 s + 7 s: no PrologEpilogTimeout (65534), but BatchStartTimeout 10 s.
    auto w = prolog_budget_warnings(20, noprolog);
    ASSERT_THAT(w, SizeIs(1));
    EXPECT_THAT(w[0], HasSubstr("BatchStartTimeout is 10 s, but the prolog may take 27 s"));
    EXPECT_THAT(w[0], HasSubstr("raise BatchStartTimeout to at least 27"));
    EXPECT_THAT(prolog_budget_warnings(3, noprolog), IsEmpty());  // 10 s: just fits

    const auto prolog = parse_scontrol_config(slurm_fixture("show_config_prolog15.txt"));
    w = prolog_budget_warnings(20, prolog);
    ASSERT_THAT(w, SizeIs(2));
    EXPECT_THAT(w[0], HasSubstr("PrologEpilogTimeout is 15 s, but the prolog may take 27 s"));
    EXPECT_THAT(w[0], HasSubstr("drain the node"));
    EXPECT_THAT(prolog_budget_warnings(3, prolog), IsEmpty());

    w = prolog_budget_warnings(3, {{"BatchStartTimeout", "soon"}});
    ASSERT_THAT(w, SizeIs(2));
    EXPECT_THAT(w[0], HasSubstr("has no PrologEpilogTimeout"));
    EXPECT_THAT(w[1], HasSubstr("BatchStartTimeout: not a time in seconds: 'soon'"));
}

// scontrol at the seam: one of Slurm 25.11 that answers --json, one of 22.05 that refuses it.
class JsonOrText final : public core::CommandRunner {
  public:
    explicit JsonOrText(bool json) : m_json(json) {}
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        calls.push_back(argv);
        if (argv.at(1) == "--json") {
            return m_json ? core::ProcessResult{0, 0, false,
                                                slurm_fixture("show_node_json_25.11.json")}
                          : core::ProcessResult{
                                1, 0, false, slurm_fixture("show_node_json_22.05_unsupported.txt")};
        }
        return core::ProcessResult{0, 0, false,
                                   "NodeName=node01 NodeAddr=10.0.0.1 Gres=gpu:8 State=IDLE\n"};
    }
    std::vector<std::vector<std::string>> calls;

  private:
    bool m_json;
};

TEST(ReadNodeStates, JsonWhereScontrolHasItElseItsText) {
    JsonOrText new_slurm(true);
    SlurmClient c1{new_slurm};
    bool json = false;
    auto a = read_node_states(c1, {"compute-0", "compute-9"}, &json);
    ASSERT_TRUE(a);
    EXPECT_TRUE(json);
    ASSERT_EQ(a->size(), 1u);
    EXPECT_EQ(a->at("compute-0").state, "DOWN+DYNAMIC_NORM");
    EXPECT_THAT(new_slurm.calls.at(0),
                ElementsAre("scontrol", "--json", "show", "node", "compute-[0,9]"));
    EXPECT_EQ(new_slurm.calls.size(), 1u);

    JsonOrText old_slurm(false);
    SlurmClient c2{old_slurm};
    auto b = read_node_states(c2, {"node01"}, &json);
    ASSERT_TRUE(b);
    EXPECT_FALSE(json);
    EXPECT_EQ(b->at("node01").gres, "gpu:8");
    ASSERT_EQ(old_slurm.calls.size(), 2u);
    EXPECT_THAT(old_slurm.calls[1], ElementsAre("scontrol", "show", "node", "-o", "node01"));
}

}  // namespace
}  // namespace preflight::outcome
