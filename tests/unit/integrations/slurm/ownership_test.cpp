// Ownership of drains and taints: `scontrol show node -o` of the installed Slurm (22.05.8) with a
// node drained by us (fixed reason, figures in Comment), one drained by an operator (with their own
// Comment and Extra) and one drained by an older preflight (figures in the reason), served by a
// fake scontrol; the drain path leaves someone else's node alone, keeps an operator's Comment,
// and the circuit breaker counts our drains in the partition. The Kubernetes side: a taint with our
// key that our annotation does not record is never taken over.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/saved_scontrol.hpp"

#include "integrations/k8s/node_sink.hpp"
#include "integrations/slurm/slurm_sink.hpp"
#include "outcome/actions.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::SavedScontrol;

std::string fixture(const std::string& name) {
    return preflight::testing::slurm_fixture(name);
}

// A fourth, idle node in the same partition, written like the saved lines.
const std::string k_idle_node04 =
    "NodeName=node04 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 "
    "NodeAddr=127.0.0.1 "
    "State=IDLE ThreadsPerCore=1 Partitions=batch  CfgTRES=cpu=1,mem=1000M,billing=1\n";

TEST(SlurmParse, ReasonCommentAndExtraOfTheInstalledSlurm) {
    const auto nodes = parse_scontrol_nodes(fixture("show_node_o_owned_foreign_old.txt"));
    ASSERT_EQ(nodes.size(), 3u);
    EXPECT_EQ(nodes[0].name, "node01");
    EXPECT_EQ(nodes[0].state, "IDLE+DRAIN");
    EXPECT_EQ(nodes[0].reason, "preflight: busbw low");
    EXPECT_EQ(nodes[0].comment,
              "preflight: check=collective.gloo_allreduce metric=busbw_gbps value=2.1 "
              "threshold=3.6 median=4 run=r42");
    EXPECT_EQ(nodes[0].partitions, std::vector<std::string>{"batch"});
    EXPECT_EQ(nodes[1].reason, "bad dimm ticket 123");
    EXPECT_EQ(nodes[1].comment, "asset tag 7781");
    EXPECT_EQ(nodes[2].reason,
              "preflight: collective.gloo_allreduce busbw_gbps 2.1 < 90% of median 4 (run r7)");
    EXPECT_EQ(nodes[2].comment, "");

    EXPECT_EQ(foreign_mark(nodes[0]), "");
    EXPECT_EQ(foreign_mark(nodes[1]),
              "left alone: IDLE+DRAIN with someone else's reason 'bad dimm ticket 123'");
    EXPECT_EQ(foreign_mark(nodes[2]), "");  // an older preflight's reason is ours
    EXPECT_TRUE(marked_by_us(nodes[0]));
    EXPECT_FALSE(marked_by_us(nodes[1]));
    EXPECT_TRUE(marked_by_us(nodes[2]));
}

TEST(SlurmParse, DrainedOrDownWithoutAReasonIsSomeoneElses) {
    SlurmNodeInfo n;
    n.state = "DOWN+NOT_RESPONDING";
    EXPECT_NE(foreign_mark(n), "");
    n.state = "IDLE+FAIL";
    EXPECT_NE(foreign_mark(n), "");
    n.state = "IDLE";
    EXPECT_EQ(foreign_mark(n), "");
    // A reason on a node in service marks nothing: Slurm 23.11 to 25.11 keep an operator's old
    // reason on a node they resumed (tests/fixtures/slurm/24.11, slurm_versions_test).
    n.reason = "reboot requested";
    EXPECT_EQ(foreign_mark(n), "");
    EXPECT_FALSE(marked_by_us(n));
    n.reason = "preflight: busbw low";
    EXPECT_FALSE(marked_by_us(n));
    for (const char* state : {"MIXED+DRAIN", "IDLE+DRAINED", "ALLOCATED+DRAINING", "DOWN",
                              "IDLE+FAIL", "MIXED+FAILING"}) {
        n.state = state;
        n.reason = "reboot requested";
        EXPECT_NE(foreign_mark(n), "") << state;
        n.reason = "preflight: busbw low";
        EXPECT_EQ(foreign_mark(n), "") << state;
        EXPECT_TRUE(marked_by_us(n)) << state;
    }
}

TEST(SlurmMarkCount, CountsOurDrainsInThePartitionAndTheNodeItself) {
    auto nodes = parse_scontrol_nodes(fixture("show_node_o_owned_foreign_old.txt") + k_idle_node04);
    const MarkCount c = slurm_mark_count(nodes, "node04");
    EXPECT_EQ(c.total, 4);
    EXPECT_EQ(c.marked, 3);  // node01 (ours), node03 (an older preflight's), node04 itself
    EXPECT_EQ(c.scope, "partition batch");
    nodes[0].partitions = {"other"};
    EXPECT_EQ(slurm_mark_count(nodes, "node04").total, 3);
}

TEST(SlurmDrain, AnOperatorsDrainIsLeftAloneWithItsReason) {
    SavedScontrol scontrol(fixture("show_node_o_owned_foreign_old.txt"));
    const SlurmClient client{scontrol, "scontrol", std::chrono::seconds(1)};
    Action a = testing::link_down_drain("node02");
    EXPECT_EQ(apply_slurm_drain(a, client, BreakerPolicy{}), DrainOutcome::left_alone);
    EXPECT_TRUE(scontrol.updates.empty());
    EXPECT_FALSE(a.applied);
    EXPECT_NE(a.error.find("bad dimm ticket 123"), std::string::npos) << a.error;
}

TEST(SlurmDrain, BreakerRefusesWhenThePartitionHasTooManyOfOurDrains) {
    SavedScontrol scontrol(fixture("show_node_o_owned_foreign_old.txt") + k_idle_node04);
    const SlurmClient client{scontrol, "scontrol", std::chrono::seconds(1)};
    Action a = testing::link_down_drain("node04");
    BreakerPolicy p;  // 4 nodes: 0.10 allows max(1, 0) = 1; two are ours already
    EXPECT_EQ(apply_slurm_drain(a, client, p), DrainOutcome::refused);
    EXPECT_TRUE(scontrol.updates.empty());
    EXPECT_EQ(a.error.rfind("circuit breaker: marking node04 would make 3 of 4 nodes", 0), 0u)
        << a.error;
    EXPECT_TRUE(a.refused_by_breaker);
    RunReport run;
    run.actions = {a};
    EXPECT_EQ(exit_code_for(run), 3);  // the run says the breaker refused
    Action counted = a;  // a drain that failed for another reason is not a breaker refusal
    counted.refused_by_breaker = false;
    run.actions = {counted};
    EXPECT_NE(exit_code_for(run), 3);

    p.max_fraction = 1.0;
    p.max_actions = 2;  // the absolute cap refuses too
    a = testing::link_down_drain("node04");
    EXPECT_EQ(apply_slurm_drain(a, client, p), DrainOutcome::refused);

    p.force = true;  // explicit override: drains, and the message (logged) says so
    a = testing::link_down_drain("node04");
    EXPECT_EQ(apply_slurm_drain(a, client, p), DrainOutcome::drained);
    ASSERT_EQ(scontrol.updates.size(), 1u);
    EXPECT_EQ(scontrol.updates[0], a.argv);
}

TEST(SlurmDrain, OurOwnNodeIsRedrainedButAnOperatorsCommentIsKept) {
    SavedScontrol scontrol(fixture("show_node_o_owned_foreign_old.txt"));
    const SlurmClient client{scontrol, "scontrol", std::chrono::seconds(1)};
    Action a = testing::link_down_drain(
        "node03");  // drained by an older preflight: ours, not counted again
    EXPECT_EQ(apply_slurm_drain(a, client, BreakerPolicy{}), DrainOutcome::drained);
    ASSERT_EQ(scontrol.updates.size(), 1u);
    EXPECT_EQ(scontrol.updates[0], a.argv);  // with our Comment: the node had none

    // An idle node whose Comment is an operator's: drained without touching the Comment.
    SavedScontrol tagged(
        "NodeName=node05 NodeAddr=127.0.0.1 State=IDLE Partitions=batch Comment=asset tag 9\n" +
        std::string(k_idle_node04));
    const SlurmClient client2{tagged, "scontrol", std::chrono::seconds(1)};
    BreakerPolicy p;
    p.max_fraction = 1.0;
    Action b = testing::link_down_drain("node05");
    EXPECT_EQ(apply_slurm_drain(b, client2, p), DrainOutcome::drained) << b.error;
    ASSERT_EQ(tagged.updates.size(), 1u);
    EXPECT_EQ(tagged.updates[0],
              (std::vector<std::string>{"scontrol", "update", "NodeName=node05", "State=DRAIN",
                                        "Reason=preflight: link down"}));
}

TEST(SlurmResume, ClearsOnlyOurComment) {
    SavedScontrol scontrol(fixture("show_node_o_owned_foreign_old.txt"));
    const SlurmClient client{scontrol, "scontrol", std::chrono::seconds(1)};
    std::string why;
    EXPECT_TRUE(client.resume_if_ours("node01", &why)) << why;
    EXPECT_FALSE(client.resume_if_ours("node02", &why));
    EXPECT_TRUE(client.resume_if_ours("node03", &why)) << why;
    ASSERT_EQ(scontrol.updates.size(), 2u);
    EXPECT_EQ(scontrol.updates[0], slurm_resume_argv("scontrol", "node01", true));
    EXPECT_EQ(scontrol.updates[1], slurm_resume_argv("scontrol", "node03", false));
    EXPECT_EQ(scontrol.updates[0].back(), "Comment=");
}

nlohmann::json k8s_node(const std::string& name, const nlohmann::json& taints,
                        const std::string& owned = "") {
    nlohmann::json n = {{"metadata", {{"name", name}, {"resourceVersion", "7"}}},
                        {"spec", {{"taints", taints}}}};
    if (!owned.empty()) {
        n["metadata"]["annotations"]["preflight.dev/owned-taints"] = owned;
    }
    return n;
}

TEST(K8sOwnership, AForeignTaintWithOurKeyIsNeverTakenOver) {
    const auto operator_taint = nlohmann::json::array(
        {{{"key", "preflight.dev/degraded"}, {"value", "manual"}, {"effect", "NoSchedule"}}});
    k8s::NodeChange change;
    change.node = "gpu1";
    change.set_taint = k8s::Taint{"preflight.dev/degraded", "link.netdev", "NoSchedule"};
    change.labels["preflight.dev/status"] = "fail";
    // No annotation at all, and an annotation recording another value: both foreign.
    for (const std::string owned : {"", R"({"preflight.dev/degraded":"other:NoSchedule"})"}) {
        auto patch = k8s::node_patch_for(k8s_node("gpu1", operator_taint, owned), change);
        ASSERT_FALSE(patch) << patch->dump();
        EXPECT_EQ(patch.error().message.rfind("left alone: taint preflight.dev/degraded=manual:"
                                              "NoSchedule was not set by preflight",
                                              0),
                  0u)
            << patch.error().message;
    }
    // Untaint removes only what we recorded: the operator's stays.
    k8s::NodeChange untaint;
    untaint.node = "gpu1";
    untaint.remove_taints = {"preflight.dev/degraded"};
    auto patch = k8s::node_patch_for(k8s_node("gpu1", operator_taint), untaint);
    ASSERT_TRUE(patch);
    EXPECT_TRUE(patch->is_null()) << patch->dump();
    EXPECT_FALSE(k8s::taint_owned(k8s_node("gpu1", operator_taint), "preflight.dev/degraded"));
}

TEST(K8sOwnership, OurRecordedTaintIsReplacedAndCounted) {
    const auto ours = nlohmann::json::array(
        {{{"key", "preflight.dev/degraded"}, {"value", "link.netdev"}, {"effect", "NoSchedule"}}});
    const std::string owned = R"({"preflight.dev/degraded":"link.netdev:NoSchedule"})";
    EXPECT_TRUE(k8s::taint_owned(k8s_node("gpu1", ours, owned), "preflight.dev/degraded"));
    k8s::NodeChange change;
    change.node = "gpu1";
    change.set_taint =
        k8s::Taint{"preflight.dev/degraded", "collective.gloo_allreduce", "NoSchedule"};
    auto patch = k8s::node_patch_for(k8s_node("gpu1", ours, owned), change);
    ASSERT_TRUE(patch) << patch.error().message;
    EXPECT_EQ(patch->at("spec").at("taints")[0].at("value"), "collective.gloo_allreduce");

    const nlohmann::json list = {
        {"items",
         {k8s_node("gpu1", ours, owned),
          k8s_node("gpu2", nlohmann::json::array({{{"key", "preflight.dev/degraded"},
                                                   {"value", "manual"},
                                                   {"effect", "NoSchedule"}}})),
          k8s_node("gpu3", nlohmann::json::array()), k8s_node("gpu4", nlohmann::json::array())}}};
    const MarkCount c = k8s::k8s_mark_count(list, "gpu3");
    EXPECT_EQ(c.total, 4);
    EXPECT_EQ(c.marked, 2);  // gpu1 (ours) and gpu3 itself; gpu2's taint is an operator's
    EXPECT_TRUE(check_breaker(BreakerPolicy{}, c, "gpu3").refused);
}

}  // namespace
}  // namespace preflight::outcome
