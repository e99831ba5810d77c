// The pure parts of the k8s launcher's fit to a real API server: node pinning one term per node
// (combined with a template's own terms, bounded in size), and why agent pods did not run, read
// from a Job, its Events and its pods. The objects below are written as kube-apiserver v1.34 and
// the Job controller write them (tests/k8s_apiserver/REAL_SERVER.md).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/k8s_job_status.hpp"
#include "integrations/k8s/pod_template_merge.hpp"

namespace preflight::controller::k8s {
namespace {

using nlohmann::json;

TEST(K8sNodePinning, OneTermPerNodeEachWithOneValue) {
    const json terms = node_pinning_terms({"gpu001", "gpu002"});
    EXPECT_EQ(terms, json::parse(R"([
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu001"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu002"]}]}])"));
}

TEST(K8sNodePinning, ATemplateTermWithoutRequirementsMatchesNoNodeAndIsLeftOut) {
    json pod = {{"spec",
                 {{"containers", json::array({{{"name", "agent"}}})},
                  {"affinity",
                   {{"nodeAffinity",
                     {{"requiredDuringSchedulingIgnoredDuringExecution",
                       {{"nodeSelectorTerms", node_pinning_terms({"a", "b", "c"})}}}}}}}}}};
    const json tmpl = json::parse(R"({"spec": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {}, {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}}}}})");
    ASSERT_TRUE(merge_pod_template(pod, tmpl));
    const json terms = pod["spec"]["affinity"]["nodeAffinity"]
                          ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 3u) << terms.dump();
    EXPECT_EQ(terms[1]["matchFields"][0]["values"], json({"b"}));
    EXPECT_EQ(terms[1]["matchExpressions"][0]["key"], "pool");
}

LaunchContext context(std::size_t nodes, const json& tmpl) {
    LaunchContext ctx;
    ctx.run_id = "20260101T000000Z-size01";
    ctx.k8s.namespace_name = "preflight";
    ctx.k8s.image = "img";
    ctx.k8s.pod_template = tmpl;
    for (std::size_t i = 0; i < nodes; ++i) {
        ctx.dial_address["gpu" + std::to_string(1000 + i)] = "10.0.0.1:7070";
    }
    return ctx;
}

std::vector<core::Node> nodes_of(const LaunchContext& ctx) {
    std::vector<core::Node> out;
    for (const auto& [name, addr] : ctx.dial_address) {
        out.push_back(core::Node{name, "", "", {}});
    }
    return out;
}

TEST(K8sNodePinning, FiveHundredTwelveNodesFitButNotTimesManyTemplateTerms) {
    auto ctx = context(512, json::object());
    auto in = job_input(nodes_of(ctx), ctx);
    ASSERT_TRUE(in) << in.error().message;
    const std::size_t bytes = agent_job(*in).dump().size();
    EXPECT_LT(bytes, 100u * 1024) << "512 node terms should be about 40 KB";

    // 512 nodes x 64 template terms: each node term repeated for each template term.
    json terms = json::array();
    for (int i = 0; i < 64; ++i) {
        terms.push_back(
            {{"matchExpressions",
              json::array({{{"key", "example.com/rack"},
                            {"operator", "In"},
                            {"values", json::array({"rack-" + std::to_string(i)})}}})}});
    }
    ctx = context(512, {{"spec",
                         {{"affinity",
                           {{"nodeAffinity",
                             {{"requiredDuringSchedulingIgnoredDuringExecution",
                               {{"nodeSelectorTerms", terms}}}}}}}}}});
    auto refused = job_input(nodes_of(ctx), ctx);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("the agent Job for 512 nodes would be"),
              std::string::npos)
        << refused.error().message;
}

// The Job controller's Event when the API server refuses a pod (controller_utils.go createPods).
json failed_create(const std::string& message, int count, const std::string& last) {
    return {{"reason", "FailedCreate"},
            {"type", "Warning"},
            {"message", message},
            {"count", count},
            {"lastTimestamp", last},
            {"involvedObject", {{"kind", "Job"}, {"name", "preflight-run"}}}};
}

TEST(K8sJobStatus, PodsNeverCreatedAreExplainedByTheLatestFailedCreate) {
    const json events = {
        {"items",
         json::array(
             {failed_create("Error creating: pods \"preflight-run-0-\" is forbidden: old", 2,
                            "2026-01-01T00:00:01Z"),
              {{"reason", "SuccessfulCreate"}, {"message", "Created pod: preflight-run-1-abcde"}},
              failed_create("Error creating: pods \"preflight-run-0-\" is forbidden: error "
                            "looking up service account preflight/x: serviceaccount \"x\" not "
                            "found",
                            3, "2026-01-01T00:00:09Z")})}};
    EXPECT_EQ(failed_create_message(events),
              "Error creating: pods \"preflight-run-0-\" is forbidden: error looking up service "
              "account preflight/x: serviceaccount \"x\" not found (5 times)");
    const json one_pod = {{"items", json::array({{{"spec", {{"nodeName", "n1"}}}}})}};
    EXPECT_EQ(pods_not_running_reason(json::object(), events, one_pod, 4),
              "3 of 4 agent pods were never created; the Job controller reports FailedCreate: " +
                  failed_create_message(events));
    // All pods exist now: an old refusal explains nothing.
    json four = {{"items", json::array()}};
    for (int i = 0; i < 4; ++i) {
        four["items"].push_back({{"spec", {{"nodeName", "n" + std::to_string(i)}}}});
    }
    EXPECT_EQ(pods_not_running_reason(json::object(), events, four, 4), "");
}

TEST(K8sJobStatus, UnscheduledPodsAndAFailedJobAreNamedToo) {
    const json pods = {
        {"items",
         json::array({{{"spec", json::object()},
                       {"status",
                        {{"phase", "Pending"},
                         {"conditions", json::array({{{"type", "PodScheduled"},
                                                      {"status", "False"},
                                                      {"reason", "Unschedulable"},
                                                      {"message",
                                                       "0/4 nodes are available: 4 Insufficient "
                                                       "nvidia.com/gpu."}}})}}}}})}};
    const json job = {{"status",
                       {{"conditions", json::array({{{"type", "Failed"},
                                                     {"status", "True"},
                                                     {"reason", "DeadlineExceeded"},
                                                     {"message",
                                                      "Job was active longer than "
                                                      "specified deadline"}}})}}}};
    EXPECT_EQ(pods_not_running_reason(job, json::object(), pods, 1),
              "1 agent pod not scheduled: 0/4 nodes are available: 4 Insufficient "
              "nvidia.com/gpu.; Job failed: DeadlineExceeded: Job was active longer than "
              "specified deadline");
}

TEST(K8sJobStatus, HostileObjectsConcludeNothingAndMessagesAreEscaped) {
    EXPECT_EQ(pods_not_running_reason(json::array(), json(3), json("x"), 2), "");
    EXPECT_EQ(pods_not_running_reason(json::object(), {{"items", {{{"reason", 7}}}}},
                                      {{"items", json::array()}}, 1),
              "");
    EXPECT_EQ(
        failed_create_message({{"items", json::array({failed_create("a\nb\x1b[31m", 1, "t")})}}),
        "a\\nb\\x1b[31m");
    EXPECT_EQ(job_events_query("preflight-x", "u-1"),
              "fieldSelector=involvedObject.kind%3DJob%2CinvolvedObject.name%3Dpreflight-x%2C"
              "involvedObject.uid%3Du-1");
}

}  // namespace
}  // namespace preflight::controller::k8s
