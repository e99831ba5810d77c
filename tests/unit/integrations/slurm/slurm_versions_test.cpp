// The Slurm readers on the saved outputs of Slurm 24.11 (Debian 13) and 26.05 (sid) beside those of
// 22.05 (tests/fixtures/slurm/README.md and <version>/README.md): node records as text and JSON,
// the changed shape of `sinfo --json`, a Reason that 24.11 keeps on a node it resumed (IDLE) and
// that must not make the node someone else's, the GPUs of a job and of a step (TresPerNode of
// 24.11 says "gres/gpu:2", 22.05 "gres:gpu:2"), the program lists of `scontrol show config`
// ("Prolog[0] = ..." since 24.11, left out when unset). Expected values are read off the fixtures.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "integrations/slurm/slurm_info.hpp"
#include "integrations/slurm/slurm_sink.hpp"
#include "tests/unit/saved_scontrol.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::SavedScontrol;
using preflight::testing::slurm_fixture;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

const std::vector<std::string> k_newer = {"24.11", "26.05"};

// The value of " Key=" up to the next space or line end in a saved output.
std::string field(const std::string& text, const std::string& key) {
    const std::size_t at = text.find(" " + key + "=");
    if (at == std::string::npos) {
        return {};
    }
    const std::size_t start = at + key.size() + 2;
    return text.substr(start, text.find_first_of(" \n", start) - start);
}

TEST(SlurmVersions, NodeTextOfEveryVersion) {
    for (const std::string& v : k_newer) {
        const auto nodes =
            parse_scontrol_nodes(slurm_fixture(v + "/show_node_o_gres_drain_down.txt"));
        ASSERT_EQ(nodes.size(), 3u) << v;
        for (const auto& n : nodes) {
            EXPECT_EQ(n.gres, "gpu:4") << v << " " << n.name;
            EXPECT_EQ(n.addr, "127.0.0.1") << v << " " << n.name;
            EXPECT_THAT(n.partitions, ElementsAre("batch")) << v;
        }
        EXPECT_EQ(nodes[0].state, "IDLE") << v;
        EXPECT_EQ(nodes[0].reason, "") << v;
        EXPECT_EQ(nodes[1].state, "IDLE+DRAIN") << v;
        EXPECT_EQ(nodes[1].reason, "ops: bad dimm (ticket 42)") << v;
        EXPECT_EQ(nodes[2].state, "DOWN") << v;
        EXPECT_EQ(nodes[2].reason, "cable check") << v;
    }
}

TEST(SlurmVersions, ScontrolJsonOfEveryVersion) {
    for (const std::string& v : k_newer) {
        auto nodes = parse_slurm_nodes_json(slurm_fixture(v + "/show_node_json_drain_down.json"));
        ASSERT_TRUE(nodes) << v << ": " << nodes.error().message;
        ASSERT_EQ(nodes->size(), 3u) << v;
        EXPECT_EQ((*nodes)[0].name, "node01") << v;
        EXPECT_EQ((*nodes)[0].state, "IDLE") << v;
        EXPECT_EQ((*nodes)[1].state, "IDLE+DRAIN") << v;
        EXPECT_EQ((*nodes)[1].reason, "ops: bad dimm (ticket 42)") << v;
        EXPECT_EQ((*nodes)[1].gres, "gpu:4") << v;
        EXPECT_EQ((*nodes)[1].addr, "127.0.0.1") << v;
        EXPECT_THAT((*nodes)[1].partitions, ElementsAre("batch")) << v;
        EXPECT_EQ((*nodes)[2].state, "DOWN") << v;
        EXPECT_EQ((*nodes)[2].reason, "cable check") << v;
    }
}

// 23.02 and later: {"sinfo": [{"node": {"state": [...]}, "nodes": {"nodes": [names]}, "reason":
// {"description": ...}, "gres": {"total": ...}, "partition": {"name": ...}}]}, where 22.05 had
// {"nodes": [...]} (sinfo_json_22.05.json, slurm_info_test).
TEST(SlurmVersions, SinfoJsonOf24And26) {
    for (const std::string& v : k_newer) {
        auto nodes = parse_slurm_nodes_json(slurm_fixture(v + "/sinfo_json.json"));
        ASSERT_TRUE(nodes) << v << ": " << nodes.error().message;
        ASSERT_EQ(nodes->size(), 3u) << v;
        EXPECT_EQ((*nodes)[0].name, "node01") << v;
        EXPECT_EQ((*nodes)[0].state, "IDLE") << v;
        EXPECT_EQ((*nodes)[0].reason, "") << v;
        EXPECT_EQ((*nodes)[1].name, "node02") << v;
        EXPECT_EQ((*nodes)[1].state, "IDLE+DRAIN") << v;
        EXPECT_TRUE((*nodes)[1].drained()) << v;
        EXPECT_EQ((*nodes)[1].reason, "ops: bad dimm (ticket 42)") << v;
        EXPECT_EQ((*nodes)[1].gres, "gpu:4") << v;
        EXPECT_THAT((*nodes)[1].partitions, ElementsAre("batch")) << v;
        EXPECT_EQ((*nodes)[2].state, "DOWN") << v;
        EXPECT_TRUE((*nodes)[2].down()) << v;
        EXPECT_EQ((*nodes)[2].reason, "cable check") << v;
    }
}

TEST(SlurmVersions, DrainedNodesOfEveryVersionKeepTheirOwners) {
    for (const std::string& v : {std::string(), std::string("24.11/"), std::string("26.05/")}) {
        const auto nodes =
            parse_scontrol_nodes(slurm_fixture(v + "show_node_o_owned_foreign_old.txt"));
        ASSERT_EQ(nodes.size(), 3u) << v;
        EXPECT_EQ(nodes[1].reason, "bad dimm ticket 123") << v;
        EXPECT_EQ(nodes[1].comment, "asset tag 7781") << v;
        EXPECT_EQ(foreign_mark(nodes[0]), "") << v;
        EXPECT_EQ(foreign_mark(nodes[1]),
                  "left alone: IDLE+DRAIN with someone else's reason 'bad dimm ticket 123'")
            << v;
        EXPECT_EQ(foreign_mark(nodes[2]), "") << v;
        EXPECT_TRUE(marked_by_us(nodes[0])) << v;
        EXPECT_FALSE(marked_by_us(nodes[1])) << v;
        EXPECT_TRUE(marked_by_us(nodes[2])) << v;
    }
}

// `scontrol update State=RESUME` on 24.11: State=IDLE, and the Reason stays (until a job runs
// there). Such a node is in service: nobody's mark, and a failing one may be drained.
TEST(SlurmVersions, AnOldReasonOnANodeBackInServiceMarksNothing) {
    const auto kept =
        parse_scontrol_nodes(slurm_fixture("24.11/show_node_o_resumed_keeps_reason.txt"));
    ASSERT_EQ(kept.size(), 3u);
    EXPECT_EQ(kept[1].state, "IDLE");
    EXPECT_EQ(kept[1].reason, "ops: bad dimm (ticket 42)");
    EXPECT_EQ(kept[2].state, "IDLE");
    EXPECT_EQ(kept[2].reason, "cable check");
    const auto owned =
        parse_scontrol_nodes(slurm_fixture("24.11/show_node_o_owned_foreign_resumed.txt"));
    ASSERT_EQ(owned.size(), 3u);
    EXPECT_EQ(owned[0].reason, "preflight: busbw low");
    EXPECT_EQ(owned[1].reason, "bad dimm ticket 123");
    EXPECT_EQ(owned[1].comment, "asset tag 7781");
    auto json =
        parse_slurm_nodes_json(slurm_fixture("24.11/show_node_json_resumed_keeps_reason.json"));
    ASSERT_TRUE(json);
    ASSERT_EQ(json->size(), 3u);
    EXPECT_EQ((*json)[1].state, "IDLE");
    EXPECT_EQ((*json)[1].reason, "ops: bad dimm (ticket 42)");
    std::vector<SlurmNodeInfo> all = kept;
    all.insert(all.end(), owned.begin(), owned.end());
    all.insert(all.end(), json->begin(), json->end());
    for (const auto& n : all) {
        EXPECT_EQ(foreign_mark(n), "") << n.name << " " << n.state << " '" << n.reason << "'";
        EXPECT_FALSE(marked_by_us(n)) << n.name << " '" << n.reason << "'";
    }
    // 26.05 clears the reason on resume; node03 stayed DOWN (its slurmd had not registered again).
    const auto cleared =
        parse_scontrol_nodes(slurm_fixture("26.05/show_node_o_resumed_keeps_reason.txt"));
    ASSERT_EQ(cleared.size(), 3u);
    EXPECT_EQ(cleared[1].state, "IDLE");
    EXPECT_EQ(cleared[1].reason, "");
    EXPECT_EQ(cleared[2].state, "DOWN");
    EXPECT_EQ(foreign_mark(cleared[2]),
              "left alone: DOWN with someone else's reason 'cable check'");
}

TEST(SlurmVersions, AFailingNodeResumedWithAnOperatorsOldReasonIsDrained) {
    SavedScontrol scontrol(slurm_fixture("24.11/show_node_o_owned_foreign_resumed.txt"));
    const SlurmClient client{scontrol, "scontrol", std::chrono::seconds(1)};
    Action a = testing::link_down_drain("node02");
    BreakerPolicy policy;
    policy.max_fraction = 0.5;  // 3 nodes, none out of service: draining one is allowed
    EXPECT_EQ(apply_slurm_drain(a, client, policy), DrainOutcome::drained) << a.error;
    EXPECT_TRUE(a.applied);
    ASSERT_EQ(scontrol.updates.size(), 1u);
    // The operator's Comment (asset tag 7781) is kept: no Comment= argument.
    EXPECT_EQ(scontrol.updates[0],
              (std::vector<std::string>{"scontrol", "update", "NodeName=node02", "State=DRAIN",
                                        "Reason=preflight: link down"}));
}

TEST(SlurmVersions, GpusPerNodeOfAJobAndAStep) {
    for (const std::string& v : {std::string(), std::string("24.11/"), std::string("26.05/")}) {
        EXPECT_THAT(parse_job_node_gpus(slurm_fixture(v + "show_job_d_gres.txt")),
                    ElementsAre(Pair("node01", 2), Pair("node02", 2), Pair("node03", 2)))
            << v;
        EXPECT_THAT(parse_job_node_gpus(slurm_fixture(v + "show_job_d_nogres.txt")),
                    ElementsAre(Pair("node01", 0), Pair("node02", 0)))
            << v;
    }
    // TresPerNode: "gres:gpu:2" in 22.05, "gres/gpu:2" in 24.11 and 26.05 (job and step).
    EXPECT_EQ(field(slurm_fixture("show_job_d_gres.txt"), "TresPerNode"), "gres:gpu:2");
    EXPECT_EQ(gres_gpu_count(field(slurm_fixture("show_job_d_gres.txt"), "TresPerNode")), 2);
    for (const std::string& v : k_newer) {
        for (const char* file : {"/show_job_d_gres.txt", "/show_step.txt", "/show_step_o.txt"}) {
            const std::string tres = field(slurm_fixture(v + file), "TresPerNode");
            EXPECT_EQ(tres, "gres/gpu:2") << v << file;
            EXPECT_EQ(gres_gpu_count(tres), 2) << v << file;
        }
    }
    EXPECT_EQ(gres_gpu_count("gres/gpu:h100:4,gres/nic:1"), 4);
    EXPECT_EQ(gres_gpu_count("gres/shard:2"), 0);
}

TEST(SlurmVersions, ProgramListsOfTheConfiguration) {
    for (const std::string& v : k_newer) {
        const auto lists =
            parse_scontrol_config(slurm_fixture(v + "/show_config_prolog_epilog_lists.txt"));
        EXPECT_EQ(lists.count("Prolog"), 0u) << v;
        EXPECT_EQ(lists.at("Prolog[1]"), "/usr/bin/true") << v;
        for (const char* key : {"Prolog", "Epilog", "PrologSlurmctld"}) {
            EXPECT_THAT(slurm_config_list(lists, key), ElementsAre("/bin/true", "/usr/bin/true"))
                << v << " " << key;
        }
        EXPECT_THAT(slurm_config_list(lists, "EpilogSlurmctld"), ElementsAre("/bin/true")) << v;
        EXPECT_EQ(lists.at("PrologEpilogTimeout"), "15") << v;

        const auto one = parse_scontrol_config(slurm_fixture(v + "/show_config_prolog15.txt"));
        EXPECT_THAT(slurm_config_list(one, "Prolog"), ElementsAre("/bin/true")) << v;
        EXPECT_THAT(slurm_config_list(one, "Epilog"), IsEmpty()) << v;
        EXPECT_EQ(one.at("PrologFlags"), "Alloc") << v;

        const auto none = parse_scontrol_config(slurm_fixture(v + "/show_config_noprolog.txt"));
        for (const char* key : {"Prolog", "Epilog", "PrologSlurmctld", "EpilogSlurmctld"}) {
            EXPECT_THAT(slurm_config_list(none, key), IsEmpty()) << v << " " << key;
        }
        EXPECT_EQ(none.at("PrologEpilogTimeout"), "65534") << v;
        EXPECT_EQ(none.at("BatchStartTimeout"), "10 sec") << v;
    }
    // 22.05: one line per setting, "(null)" when unset.
    const auto old = parse_scontrol_config(slurm_fixture("show_config_noprolog.txt"));
    EXPECT_EQ(old.at("Prolog"), "(null)");
    EXPECT_THAT(slurm_config_list(old, "Prolog"), IsEmpty());
    EXPECT_THAT(slurm_config_list(old, "PrologSlurmctld"), IsEmpty());
    const auto set = parse_scontrol_config(slurm_fixture("show_config_prolog15.txt"));
    EXPECT_THAT(slurm_config_list(set, "Prolog"), ElementsAre("/bin/true"));
}

}  // namespace
}  // namespace preflight::outcome
