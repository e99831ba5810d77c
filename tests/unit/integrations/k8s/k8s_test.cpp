// Pure parts of the Kubernetes integration: kubeconfig parsing, the Node patch preflight computes
// (owned vs operator taints, no-op detection, resourceVersion), the agent Job and pod failure
// classification, and the k8s config section.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "../run_targets.hpp"

#include "core/config.hpp"
#include "integrations/k8s/client.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/node_sink.hpp"
#include "outcome/actions.hpp"
#include "plugins/check.hpp"

namespace preflight::controller::k8s {
namespace {

using nlohmann::json;

const std::string k_kubeconfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.crt
- name: c2
  cluster:
    server: https://10.0.0.2:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
contexts:
- name: prod
  context: {cluster: c1, user: u1, namespace: gpu}
- name: lab
  context: {cluster: c2, user: u2}
users:
- name: u1
  user: {token: abc}
- name: u2
  user:
    client-certificate: u2.crt
    client-key: /abs/u2.key
)";

TEST(Kubeconfig, CurrentContextWithRelativeCaFile) {
    auto c = outcome::k8s::parse_kubeconfig(k_kubeconfig, "/etc/kube/config");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->server, "https://10.0.0.1:6443");
    EXPECT_EQ(c->ca_file, "/etc/kube/certs/ca.crt");
    EXPECT_EQ(c->token, "abc");
    EXPECT_EQ(c->namespace_name, "gpu");
}

TEST(Kubeconfig, NamedContextWithCaDataAndClientCertificate) {
    auto c = outcome::k8s::parse_kubeconfig(k_kubeconfig, "/etc/kube/config", "lab");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->ca_pem, "-----BEGIN CERTIFICATE-----\n");
    EXPECT_EQ(c->cert_file, "/etc/kube/u2.crt");
    EXPECT_EQ(c->key_file, "/abs/u2.key");
    EXPECT_TRUE(c->token.empty());
}

// kube-apiserver answers a request without credentials as system:anonymous with 403 (not 401):
// the message must not send the operator to grant RBAC to the anonymous user.
TEST(Kubeconfig, ForbiddenForAnonymousSaysNoCredentialsNotRbac) {
    outcome::k8s::Response anon{
        403, R"({"kind": "Status", "reason": "Forbidden", "message": "nodes is forbidden: User )"
             R"(\"system:anonymous\" cannot list resource \"nodes\" in API group \"\" at the )"
             R"(cluster scope", "code": 403})"};
    const std::string text = outcome::k8s::describe_failure(
        anon, outcome::k8s::Access{"list", "nodes", "", ""}, "kubeconfig /k");
    EXPECT_NE(text.find("no credentials reached the server: kubeconfig /k"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("grant verb"), std::string::npos) << text;
    outcome::k8s::Response sa{403, R"({"message": "nodes is forbidden: User \"system:)"
                                   R"(serviceaccount:preflight:x\" cannot list ..."})"};
    EXPECT_NE(outcome::k8s::describe_failure(sa, outcome::k8s::Access{"list", "nodes", "", ""},
                                             "in-cluster")
                  .find("grant verb 'list' on resource 'nodes'"),
              std::string::npos);
}

TEST(Kubeconfig, ClearErrors) {
    auto missing = outcome::k8s::parse_kubeconfig(k_kubeconfig, "kc", "nope");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "kc: context 'nope' not found");
    auto http = outcome::k8s::parse_kubeconfig(
        "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
        "clusters: [{name: c, cluster: {server: 'http://h:8080'}}]\n",
        "kc");
    ASSERT_FALSE(http);
    EXPECT_NE(http.error().message.find("not an https:// URL"), std::string::npos);
    auto exec = outcome::k8s::parse_kubeconfig(
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
        "users: [{name: u, user: {exec: {command: aws}}}]\n",
        "kc");
    ASSERT_FALSE(exec);
    EXPECT_NE(exec.error().message.find("exec or auth-provider"), std::string::npos);
    auto syntax = outcome::k8s::parse_kubeconfig("clusters: [\n", "kc");
    ASSERT_FALSE(syntax);
    EXPECT_EQ(syntax.error().message.rfind("kc:2:", 0), 0u) << syntax.error().message;
}

json node_with(const json& taints, const json& annotations = json::object()) {
    return {{"metadata",
             {{"name", "n1"},
              {"resourceVersion", "41"},
              {"labels", {{"kubernetes.io/hostname", "n1"}}},
              {"annotations", annotations}}},
            {"spec", {{"taints", taints}}}};
}

TEST(NodePatch, AddsOurTaintKeepsOthersAndCarriesResourceVersion) {
    const json other = {{"key", "example.com/x"}, {"effect", "NoExecute"}};
    outcome::k8s::NodeChange c;
    c.node = "n1";
    c.set_taint = outcome::k8s::Taint{"preflight.dev/degraded", "link.netdev", "NoSchedule"};
    c.labels["preflight.dev/status"] = "fail";
    auto p = outcome::k8s::node_patch_for(node_with(json::array({other})), c);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ((*p)["metadata"]["resourceVersion"], "41");
    EXPECT_EQ((*p)["spec"]["taints"], json::array({other,
                                                   {{"key", "preflight.dev/degraded"},
                                                    {"value", "link.netdev"},
                                                    {"effect", "NoSchedule"}}}));
    EXPECT_EQ((*p)["metadata"]["labels"]["preflight.dev/status"], "fail");
    EXPECT_EQ(json::parse(
                  (*p)["metadata"]["annotations"]["preflight.dev/owned-taints"].get<std::string>()),
              json({{"preflight.dev/degraded", "link.netdev:NoSchedule"}}));
}

TEST(NodePatch, NothingToDoIsNull) {
    const json ours = {{"key", "preflight.dev/degraded"}, {"value", "x"}, {"effect", "NoSchedule"}};
    outcome::k8s::NodeChange c;
    c.node = "n1";
    c.set_taint = outcome::k8s::Taint{"preflight.dev/degraded", "x", "NoSchedule"};
    auto p = outcome::k8s::node_patch_for(
        node_with(json::array({ours}),
                  {{"preflight.dev/owned-taints", R"({"preflight.dev/degraded":"x:NoSchedule"})"}}),
        c);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->is_null()) << p->dump();
}

TEST(NodePatch, RemovesOnlyTheDegradedTaintWeSet) {
    const json manual = {
        {"key", "preflight.dev/degraded"}, {"value", "manual"}, {"effect", "NoSchedule"}};
    outcome::k8s::NodeChange c;
    c.node = "n1";
    c.remove_taints = {"preflight.dev/degraded"};
    // Not ours (no annotation): kept.
    auto kept = outcome::k8s::node_patch_for(node_with(json::array({manual})), c);
    ASSERT_TRUE(kept);
    EXPECT_TRUE(kept->is_null()) << kept->dump();
    // Ours, but an operator changed its value since: still kept.
    auto changed = outcome::k8s::node_patch_for(
        node_with(json::array({manual}),
                  {{"preflight.dev/owned-taints", R"({"preflight.dev/degraded":"x:NoSchedule"})"}}),
        c);
    ASSERT_TRUE(changed);
    EXPECT_FALSE(changed->contains("spec")) << changed->dump();
    // Exactly ours: removed, and the annotation with it.
    auto removed = outcome::k8s::node_patch_for(
        node_with(json::array({manual}), {{"preflight.dev/owned-taints",
                                           R"({"preflight.dev/degraded":"manual:NoSchedule"})"}}),
        c);
    ASSERT_TRUE(removed);
    EXPECT_EQ((*removed)["spec"]["taints"], json::array());
    EXPECT_TRUE((*removed)["metadata"]["annotations"]["preflight.dev/owned-taints"].is_null());
}

TEST(NodePatch, RefusesKeysOutsideOurPrefix) {
    outcome::k8s::NodeChange c;
    c.node = "n1";
    c.remove_taints = {"node.kubernetes.io/unschedulable"};
    EXPECT_FALSE(outcome::k8s::node_patch_for(node_with(json::array()), c));
    outcome::k8s::NodeChange l;
    l.node = "n1";
    l.labels["kubernetes.io/hostname"] = std::nullopt;
    EXPECT_FALSE(outcome::k8s::node_patch_for(node_with(json::array()), l));
}

TEST(NodePatch, CertificationNeverAddsTheUncertifiedTaint) {
    outcome::k8s::NodeChange c;
    c.node = "n1";
    c.set_taint = outcome::k8s::Taint{"preflight.dev/uncertified", "link.netdev", "NoSchedule"};
    c.only_if_tainted = true;
    auto p = outcome::k8s::node_patch_for(node_with(json::array()), c);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->is_null()) << p->dump();
}

TEST(BusbwLabel, IsALabelValue) {
    EXPECT_EQ(outcome::k8s::busbw_label_value(5.0), "5");
    EXPECT_EQ(outcome::k8s::busbw_label_value(11.54), "11.5");
    EXPECT_EQ(outcome::k8s::busbw_label_value(391.7), "392");
    EXPECT_EQ(outcome::k8s::busbw_label_value(12345.0), "12345");
    EXPECT_EQ(outcome::k8s::busbw_label_value(-1.0), "unknown");
}

TEST(AgentJob, IndexedOnePodPerNodeNoTokenInSpec) {
    JobSpecInput in;
    in.name = job_name_for("20260101T000000Z-AbC123");
    in.namespace_name = "preflight";
    in.run_id = "20260101T000000Z-AbC123";
    in.nodes = {"a", "b"};
    in.image = "img";
    in.service_account = "sa";
    in.controller = "10.0.0.5:7070";
    const json job = agent_job(in);
    EXPECT_EQ(in.name, "preflight-20260101t000000z-abc123");
    EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
    EXPECT_EQ(job["spec"]["completions"], 2);
    const json& pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["automountServiceAccountToken"], false);
    EXPECT_EQ(pod["containers"][0]["env"][1]["valueFrom"]["secretKeyRef"]["name"], in.name);
    EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["preflight.dev/run"], in.name);
    EXPECT_EQ(token_secret(in, "t0k")["stringData"]["PREFLIGHT_RUN_SECRET"], "t0k");
    EXPECT_LE(job_name_for(std::string(100, 'x')).size(), 52u);
}

TEST(PodStartFailure, Classified) {
    auto pod = [](const json& status) {
        return json{{"metadata", {{"name", "p"}}}, {"status", status}};
    };
    EXPECT_EQ(pod_start_failure(pod({{"phase", "Running"}})), "");
    EXPECT_EQ(
        pod_start_failure(pod({{"phase", "Pending"},
                               {"containerStatuses",
                                {{{"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}}}})),
        "");
    EXPECT_EQ(pod_start_failure(pod(
                  {{"containerStatuses",
                    {{{"state",
                       {{"waiting", {{"reason", "ErrImagePull"}, {"message", "no such"}}}}}}}}})),
              "pod p cannot start: ErrImagePull: no such");
    EXPECT_NE(pod_start_failure(
                  pod({{"containerStatuses", {{{"state", {{"terminated", {{"exitCode", 2}}}}}}}}}))
                  .find("status 2"),
              std::string::npos);
    EXPECT_NE(pod_start_failure(pod({{"phase", "Failed"}, {"reason", "Evicted"}})).find("Evicted"),
              std::string::npos);
    // Other types than the API's (found by fuzz/k8s_response_fuzz): nothing concluded, no throw.
    EXPECT_EQ(pod_start_failure(json{{"status", "Failure"}}), "");
    EXPECT_EQ(pod_start_failure(pod({{"containerStatuses", {{{"state", 3}}}}})), "");
    EXPECT_EQ(pod_start_failure(json::array()), "");
}

TEST(K8sActionSink, CalledOnlyWithoutATrippedBreaker) {
    auto report_with_failures = [](int failed) {
        outcome::RunReport r;
        for (int i = 0; i < 10; ++i) {
            outcome::NodeReport n;
            n.name = "n" + std::to_string(i);
            n.verdict = i < failed ? core::Verdict::fail : core::Verdict::pass;
            r.nodes.push_back(n);
        }
        return r;
    };
    core::ActionsConfig cfg;
    cfg.targets = {"k8s"};
    core::SystemCommandRunner runner;
    int calls = 0;
    outcome::K8sSink::ApplyOne sink = [&](const outcome::RunReport&, outcome::Action& a) {
        ++calls;
        a.applied = true;
    };
    outcome::RunReport tripped = report_with_failures(5);  // 5 of 10 > max(1, 10 % of 10)
    testing::plan_actions(tripped, cfg);
    ASSERT_TRUE(tripped.breaker.tripped);
    testing::apply_actions(tripped, runner, std::chrono::seconds(1), sink);
    EXPECT_EQ(calls, 0);
    outcome::RunReport one = report_with_failures(1);
    testing::plan_actions(one, cfg);
    testing::apply_actions(one, runner, std::chrono::seconds(1), sink);
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(one.actions[0].applied);
    // Without a sink the action says why it was not applied.
    outcome::RunReport unconfigured = report_with_failures(1);
    testing::plan_actions(unconfigured, cfg);
    testing::apply_actions(unconfigured, runner, std::chrono::seconds(1));
    EXPECT_FALSE(unconfigured.actions[0].applied);
    EXPECT_EQ(unconfigured.actions[0].error, testing::k_k8s_unavailable);
}

TEST(K8sConfig, SectionParsedAndTyposNamed) {
    auto catalog = plugins::param_catalog();
    auto cfg = core::parse_config(
        "checks: [link.netdev]\nk8s: {namespace: gpu-checks, image: 'preflight:1', max_retries: "
        "2}\n",
        "run.yaml", catalog);
    EXPECT_EQ(cfg.k8s.namespace_name, "gpu-checks");
    EXPECT_EQ(cfg.k8s.image, "preflight:1");
    EXPECT_EQ(cfg.k8s.max_retries, 2);
    try {
        core::parse_config("checks: [link.netdev]\nk8s:\n  imagee: x\n", "run.yaml", catalog);
        FAIL() << "unknown key accepted";
    } catch (const core::ConfigError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("run.yaml:3:3:", 0), 0u) << e.what();
    }
}

}  // namespace
}  // namespace preflight::controller::k8s
