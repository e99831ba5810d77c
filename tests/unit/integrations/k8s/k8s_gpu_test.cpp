// The pure parts of issue 19's Kubernetes work: the pod template merge and GPU defaults
// (integrations/k8s/pod_template_merge.hpp), the GPU count from the nodes' allocatable, the
// NodeCondition and its strategic merge patch (integrations/k8s/node_condition.hpp), the gang
// gate's pods and published verdicts (integrations/k8s/gang_gate_verdicts.hpp), and the agent's
// side of both (integrations/k8s/agent_node_condition.hpp, integrations/k8s/agent_gang_gate.hpp).
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integrations/k8s/agent_gang_gate.hpp"
#include "integrations/k8s/agent_node_condition.hpp"
#include "integrations/k8s/gang_gate_verdicts.hpp"
#include "integrations/k8s/k8s_gpu_count.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/node_condition.hpp"
#include "integrations/k8s/pod_template_merge.hpp"

namespace preflight::controller::k8s {
namespace {

using nlohmann::json;

JobSpecInput input(int nodes = 2) {
    JobSpecInput in;
    in.run_id = "20260101T000000Z-abc123";
    in.name = job_name_for(in.run_id);
    in.namespace_name = "preflight";
    for (int i = 1; i <= nodes; ++i) {
        in.nodes.push_back("gpu00" + std::to_string(i));
    }
    in.image = "localhost/preflight:0.2.0";
    in.service_account = "preflight-agent";
    in.controller = "10.0.0.5:7070";
    return in;
}

const json& pod_spec(const json& job) {
    return job["spec"]["template"]["spec"];
}

TEST(K8sPodTemplateMerge, DefaultsTolerateGpuNodesAndAskForNoGpuWithoutGpuChecks) {
    json job = agent_job(input());
    const json& spec = pod_spec(job);
    ASSERT_EQ(spec["tolerations"].size(), 3u);
    EXPECT_EQ(spec["tolerations"][2],
              json({{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}));
    EXPECT_FALSE(spec["containers"][0].contains("resources"));
    for (const auto& v : spec["volumes"]) {
        EXPECT_NE(v["name"], "dshm");
    }
}

TEST(K8sPodTemplateMerge, GpuChecksAskForAllGpusAndAMemoryBackedShm) {
    JobSpecInput in = input();
    in.gpus_per_node = 8;
    json job = agent_job(in);
    const json& agent = pod_spec(job)["containers"][0];
    EXPECT_EQ(agent["resources"]["limits"]["nvidia.com/gpu"], 8);
    EXPECT_FALSE(agent["resources"].contains("requests")) << "defaults to the limit";
    EXPECT_EQ(agent["volumeMounts"].back(), json({{"name", "dshm"}, {"mountPath", "/dev/shm"}}));
    EXPECT_EQ(pod_spec(job)["volumes"].back(),
              json({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}));

    // A template that names the GPUs wins; its own /dev/shm replaces the default one.
    in.pod_template = json::parse(R"({"spec": {
        "containers": [{"name": "agent",
                        "resources": {"limits": {"nvidia.com/gpu": 4}},
                        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]}})");
    EXPECT_TRUE(template_sets_gpus(in.pod_template));
    job = agent_job(in);
    const json& merged = pod_spec(job)["containers"][0];
    EXPECT_EQ(merged["resources"]["limits"]["nvidia.com/gpu"], 4);
    int shm_mounts = 0;
    for (const auto& m : merged["volumeMounts"]) {
        shm_mounts += m["mountPath"] == "/dev/shm" ? 1 : 0;
    }
    EXPECT_EQ(shm_mounts, 1);
    for (const auto& v : pod_spec(job)["volumes"]) {
        EXPECT_NE(v["name"], "dshm") << "an unused default volume stayed";
    }
}

TEST(K8sPodTemplateMerge, RulesAppendReplaceAndNeverLoosenPreflightsParts) {
    JobSpecInput in = input();
    in.pod_template = json::parse(R"({
      "metadata": {"labels": {"team": "ml"}},
      "spec": {
        "hostNetwork": false,
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                         "effect": "NoSchedule"},
                        {"key": "example.com/rdma", "operator": "Exists"}],
        "affinity": {
          "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["b"]}]}]}},
          "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "noisy"}}, "topologyKey": "kubernetes.io/hostname"}]}},
        "containers": [{"name": "agent",
          "env": [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "NCCL_DEBUG", "value": "INFO"}],
          "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "privileged": true}}]}})");
    json job = agent_job(in);
    const json& pod = job["spec"]["template"];
    EXPECT_EQ(pod["metadata"]["labels"]["team"], "ml");
    EXPECT_EQ(pod["metadata"]["labels"]["preflight.dev/run"], job_name_for(in.run_id));
    const json& spec = pod["spec"];
    EXPECT_EQ(spec["hostNetwork"], false);
    EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst") << "ClusterFirstWithHostNet is for host network";
    EXPECT_EQ(spec["nodeSelector"]["pool"], "gpu");
    // The nvidia.com/gpu default is replaced in place (same key and effect); others appended.
    ASSERT_EQ(spec["tolerations"].size(), 4u) << spec["tolerations"].dump();
    EXPECT_EQ(spec["tolerations"][2]["value"], "present");
    EXPECT_EQ(spec["tolerations"][3]["key"], "example.com/rdma");
    // Every (ORed) template term is combined with each node's term: 2 nodes x 2 racks, each
    // term pinned to one node (a node field selector takes one value) and one rack.
    const json terms = spec["affinity"]["nodeAffinity"]
                           ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 4u) << terms.dump();
    std::set<std::pair<std::string, std::string>> pairs;
    for (const auto& term : terms) {
        ASSERT_EQ(term["matchFields"].size(), 1u);
        EXPECT_EQ(term["matchFields"][0]["key"], "metadata.name");
        ASSERT_EQ(term["matchFields"][0]["values"].size(), 1u);
        pairs.insert({term["matchFields"][0]["values"][0].get<std::string>(),
                      term["matchExpressions"][0]["values"][0].get<std::string>()});
    }
    EXPECT_EQ(pairs, (std::set<std::pair<std::string, std::string>>{
                         {"gpu001", "a"}, {"gpu001", "b"}, {"gpu002", "a"}, {"gpu002", "b"}}));
    const json anti =
        spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    ASSERT_EQ(anti.size(), 2u);
    EXPECT_TRUE(anti[0]["labelSelector"]["matchLabels"].contains("preflight.dev/run"));
    const json& agent = spec["containers"][0];
    EXPECT_EQ(agent["env"].size(), 3u) << "later wins by name";
    EXPECT_EQ(agent["env"][2], json({{"name", "NCCL_DEBUG"}, {"value", "INFO"}}));
    EXPECT_EQ(agent["securityContext"]["capabilities"]["add"], json({"IPC_LOCK"}));
    EXPECT_EQ(agent["securityContext"]["privileged"], true);
    EXPECT_FALSE(agent["securityContext"].contains("allowPrivilegeEscalation"))
        << "privileged with allowPrivilegeEscalation false is refused by the API server";
    EXPECT_EQ(agent["securityContext"]["readOnlyRootFilesystem"], true);
    EXPECT_EQ(agent["command"][0], "preflight-agent");
}

TEST(K8sPodTemplateMerge, ATemplateBuiltInCodeCannotReachPreflightsParts) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"spec": {"containers": [{"name": "agent", "command": ["sh"]}]}})",
         "'k8s.pod_template.spec.containers[0].command' is preflight's agent command"},
        {R"({"spec": {"containers": [{"name": "agent", "env": [{"name": "PREFLIGHT_RUN_SECRET", "value": "x"}]}]}})",
         "'PREFLIGHT_RUN_SECRET' is set by preflight"},
        {R"({"spec": {"restartPolicy": "Always"}})", "'k8s.pod_template.spec.restartPolicy'"},
        {R"({"spec": {"tolerations": [{"key": "preflight.dev/uncertified", "operator": "Equal"}]}})",
         "is tolerated by preflight itself"},
        {R"({"spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}}})",
         "cannot replace preflight's one-pod-per-node anti-affinity"},
        {R"({"metadata": {"labels": {"preflight.dev/run": "other"}}})", "is set by preflight"},
        {R"({"spec": {"volumes": [{"name": "tls-ca", "emptyDir": {}}]}})",
         "'tls-ca' is preflight's"},
        {R"({"spec": {"containers": [{"name": "agent", "volumeMounts": [{"name": "gone", "mountPath": "/g"}]}]}})",
         "mounts 'gone', which no volume defines"},
    };
    for (const auto& [tmpl, message] : cases) {
        JobSpecInput in = input();
        in.pod_template = json::parse(tmpl);
        try {
            (void)agent_job(in);
            ADD_FAILURE() << "accepted: " << tmpl;
        } catch (const core::ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
                << tmpl << " -> " << e.what();
        }
    }
}

TEST(K8sGpuCount, TheSmallestAllocatableOfTheRunsNodesWithNotes) {
    const json list = json::parse(R"({"items": [
      {"metadata": {"name": "g1"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
      {"metadata": {"name": "g2"}, "status": {"allocatable": {"nvidia.com/gpu": 4}}},
      {"metadata": {"name": "cpu1"}, "status": {"allocatable": {"cpu": "64"}}},
      {"metadata": {"name": "g9"}, "status": {"allocatable": {"nvidia.com/gpu": "2"}}}]})");
    auto count = gpus_from_nodes(list, {"g1", "g2", "cpu1", "gone"});
    EXPECT_EQ(count.gpus, 4) << "g9 is not in the run";
    ASSERT_EQ(count.notes.size(), 3u);
    EXPECT_EQ(count.notes[0], "not found in the API: gone");
    EXPECT_NE(count.notes[1].find("cpu1"), std::string::npos);
    EXPECT_NE(count.notes[2].find("4 to 8"), std::string::npos);
    EXPECT_EQ(gpus_from_nodes(list, {"g1"}).gpus, 8);
    EXPECT_TRUE(gpus_from_nodes(list, {"g1"}).notes.empty());
    EXPECT_EQ(gpus_from_nodes(list, {"cpu1"}).gpus, 0);
    EXPECT_EQ(gpus_from_nodes(json::object(), {"g1"}).gpus, 0);
}

TEST(K8sNodeCondition, VerdictsMapToTrueFalseAndUnknownNeverFalseForDoubt) {
    using outcome::k8s::condition_for;
    EXPECT_EQ(condition_for(core::Verdict::pass, {}).status, "True");
    EXPECT_EQ(condition_for(core::Verdict::skip, {}).status, "True");
    EXPECT_EQ(condition_for(core::Verdict::warn, {"x"}).reason,
              "PreflightChecksPassedWithWarnings");
    const auto failed = condition_for(core::Verdict::fail, {"eth0: mtu 1500 != expected 9000"});
    EXPECT_EQ(failed.status, "False");
    EXPECT_EQ(failed.reason, "PreflightCheckFailed");
    EXPECT_EQ(failed.message, "eth0: mtu 1500 != expected 9000");
    const auto doubt = condition_for(core::Verdict::error, {"not finished within the 20 s budget"});
    EXPECT_EQ(doubt.status, "Unknown");
    EXPECT_EQ(doubt.reason, "PreflightCannotJudge");
    EXPECT_LE(condition_for(core::Verdict::fail, {std::string(5000, 'x')}).message.size(),
              outcome::k8s::k_max_condition_message);
}

TEST(K8sNodeCondition, TransitionTimeMovesOnlyWithTheStatus) {
    const json node = json::parse(R"({"status": {"conditions": [
      {"type": "Ready", "status": "True"},
      {"type": "PreflightHealthy", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})");
    auto c = outcome::k8s::condition_for(core::Verdict::fail, {"x"});
    json patch = outcome::k8s::condition_patch(node, c, "2026-01-02T00:00:00Z");
    ASSERT_EQ(patch["status"]["conditions"].size(), 1u) << "only ours: merged by type";
    EXPECT_EQ(patch["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
    EXPECT_EQ(patch["status"]["conditions"][0]["lastHeartbeatTime"], "2026-01-02T00:00:00Z");
    c = outcome::k8s::condition_for(core::Verdict::pass, {});
    patch = outcome::k8s::condition_patch(node, c, "2026-01-02T00:00:00Z");
    EXPECT_EQ(patch["status"]["conditions"][0]["lastTransitionTime"], "2026-01-02T00:00:00Z");
}

TEST(K8sNodeConditionLoop, ChecksRunAsAChildWithoutTheLoopsOptions) {
    const auto argv = agent::check_run_argv(
        {"preflight-agent", "--standalone", "--node=n1", "--k8s-node-condition", "--interval",
         "300", "--once", "--kubeconfig=/k", "--config", "/c.yaml", "--termination-log", "/t",
         "--budget-s=20"},
        "/bin/preflight-agent", "/tmp/o.json");
    EXPECT_EQ(argv, (std::vector<std::string>{"/bin/preflight-agent", "--standalone", "--node=n1",
                                              "--config", "/c.yaml", "--budget-s=20", "--outcome",
                                              "/tmp/o.json"}));
    using agent::condition_from_run;
    EXPECT_EQ(condition_from_run(R"({"verdict": "fail", "reasons": ["eth0 down"]})", 1, "exit 1",
                                 "PreflightHealthy")
                  .status,
              "False");
    const auto none = condition_from_run("", 2, "the check run exited with status 2", "T");
    EXPECT_EQ(none.status, "Unknown");
    EXPECT_NE(none.message.find("configuration or usage error"), std::string::npos);
    EXPECT_EQ(condition_from_run("{garbage", -1, "killed", "T").status, "Unknown");
}

TEST(K8sGangGate, VerdictsPerPodUidAndStaleKeysDropped) {
    const json pods = json::parse(R"({"items": [
      {"metadata": {"uid": "u1", "name": "p1"}, "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}},
      {"metadata": {"uid": "u2", "name": "p2"}, "spec": {"nodeName": "n2"}},
      {"metadata": {"uid": "u3", "name": "p3"}, "spec": {}},
      {"metadata": {"uid": "u4", "name": "p4"}, "spec": {"nodeName": "n4"}, "status": {"phase": "Failed"}},
      {"metadata": {"uid": "u5", "name": "p5", "deletionTimestamp": "x"}, "spec": {"nodeName": "n5"}}]})");
    auto gang = outcome::k8s::gang_pods(pods);
    ASSERT_EQ(gang.size(), 3u);
    EXPECT_EQ(gang[2].node, "") << "unscheduled";
    gang.pop_back();
    std::map<std::string, outcome::k8s::NodeVerdict> verdicts = {
        {"n1", {core::Verdict::pass, {}}},
        {"n2", {core::Verdict::fail, {"link.netdev eth0: mtu 1500 != expected 9000"}}}};
    const json existing = {{"data", {{"old-uid", "pass\n"}, {"u1", "fail\n"}}}};
    const json patch = outcome::k8s::verdicts_patch(existing, gang, verdicts);
    EXPECT_EQ(patch, json({{"data",
                            {{"u1", "pass\n"},
                             {"u2", "fail\nlink.netdev eth0: mtu 1500 != expected 9000\n"},
                             {"old-uid", nullptr}}}}));
    std::vector<outcome::k8s::GangPod> lost = {{"u9", "p9", "n9"}};
    EXPECT_EQ(outcome::k8s::verdicts_patch(json::object(), lost, verdicts)["data"]["u9"],
              "error\nnode n9 was not in the run\n");
}

TEST(K8sGangGate, TheInitContainerExitsByItsPodsVerdict) {
    using agent::gate_exit_code;
    using agent::OnError;
    std::string msg;
    EXPECT_EQ(gate_exit_code("pass\n", OnError::block, &msg), 0);
    EXPECT_EQ(msg, "pass");
    EXPECT_EQ(gate_exit_code("fail\neth0 down\n", OnError::allow, &msg), 1);
    EXPECT_EQ(msg, "fail: eth0 down");
    EXPECT_EQ(gate_exit_code("error\nunreachable\n", OnError::block, &msg), 4);
    EXPECT_EQ(gate_exit_code("error\n", OnError::allow, &msg), 0);
    EXPECT_EQ(gate_exit_code("warn\n", OnError::allow, &msg), 0);
    EXPECT_EQ(gate_exit_code("warn\n", OnError::block, &msg), 5);
    EXPECT_EQ(gate_exit_code("banana\n", OnError::block, &msg), 4);
    EXPECT_NE(msg.find("unreadable verdict"), std::string::npos);
}

}  // namespace
}  // namespace preflight::controller::k8s
