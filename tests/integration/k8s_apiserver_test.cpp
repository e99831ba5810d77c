// Kubernetes sink, certification and Indexed Job launcher against the local API-server stand-in
// (tests/k8s_apiserver/apiserver.py: HTTPS with a CA made here by the openssl CLI, bearer tokens,
// RBAC, real JSON/merge/strategic patches, resourceVersion conflicts), cross-checked with the real
// kubectl: what kubectl sees after preflight acts is what preflight meant.
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/auth.hpp"
#include "core/config.hpp"
#include "core/process.hpp"
#include "integrations/k8s/client.hpp"
#include "integrations/k8s/k8s_certify.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/node_sink.hpp"
#include "outcome/actions.hpp"
#include "outcome/report/json.hpp"
#include "plugins/check.hpp"
#include "tests/integration/k8s_standin.hpp"
#include "tests/unit/integrations/run_targets.hpp"

namespace preflight::controller::k8s {
namespace {

TEST_F(K8sApiServer, TaintLabelEventRoundTripAsKubectlSeesIt) {
    PF_NEEDS_STANDIN("it counts the requests the server received");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed (scripts/install_deps.sh installs it)";
    }
    outcome::RunReport report =
        report_with({{"n1", core::Verdict::fail}, {"n2", core::Verdict::pass}});
    core::ActionsConfig actions;
    actions.targets = {"k8s"};
    actions.max_action_fraction = 1.0;
    testing::plan_actions(report, actions);
    ASSERT_EQ(report.actions.size(), 1u);
    core::KubernetesConfig cfg;
    cfg.kubeconfig = m_kubeconfig;
    core::SystemCommandRunner runner;
    testing::apply_actions(report, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg));
    ASSERT_TRUE(report.actions[0].applied) << report.actions[0].error;

    json n1 = kubectl_json({"get", "node", "n1"});
    json t = taint_of(n1, "preflight.dev/degraded");
    ASSERT_FALSE(t.is_null()) << n1.dump(2);
    EXPECT_EQ(t["value"], "collective.gloo_allreduce");
    EXPECT_EQ(t["effect"], "NoSchedule");
    EXPECT_EQ(n1["metadata"]["labels"]["preflight.dev/status"], "fail");
    EXPECT_EQ(n1["metadata"]["labels"]["preflight.dev/busbw-gbps"], "5");
    EXPECT_EQ(n1["metadata"]["annotations"]["preflight.dev/reason"], report.actions[0].reason);
    json n2 = kubectl_json({"get", "node", "n2"});
    EXPECT_TRUE(taint_of(n2, "preflight.dev/degraded").is_null());
    EXPECT_FALSE(n2["metadata"]["labels"].contains("preflight.dev/status"));

    // The Event is attached to the Node the way kubectl describe looks for it.
    const std::string described = kubectl_text({"describe", "node", "n1"});
    EXPECT_NE(described.find("preflight.dev/degraded=collective.gloo_allreduce:NoSchedule"),
              std::string::npos)
        << described;
    EXPECT_NE(described.find("PreflightFailed"), std::string::npos) << described;
    // The figures go to the Event; the reason annotation is the fixed text.
    EXPECT_NE(described.find("metric=busbw_gbps value=5"), std::string::npos) << described;
    EXPECT_EQ(report.actions[0].reason, "preflight: busbw low");

    // Applying again changes nothing (no second PATCH), and the node passing later untaints it.
    const int patches = count_requests("PATCH", "/api/v1/nodes/n1");
    testing::apply_actions(report, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg));
    report.actions[0].applied = false;
    testing::apply_actions(report, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg));
    EXPECT_EQ(count_requests("PATCH", "/api/v1/nodes/n1"), patches);

    auto passed = certify_nodes(m_client.get(), report_with({{"n1", core::Verdict::pass}}), true);
    ASSERT_TRUE(passed[0].applied) << passed[0].error;
    n1 = kubectl_json({"get", "node", "n1"});
    EXPECT_TRUE(taint_of(n1, "preflight.dev/degraded").is_null()) << n1.dump(2);
    EXPECT_EQ(n1["metadata"]["labels"]["preflight.dev/status"], "pass");
    EXPECT_FALSE(n1["metadata"]["annotations"].contains("preflight.dev/owned-taints"));
    EXPECT_FALSE(n1["metadata"]["annotations"].contains("preflight.dev/reason"));
}

TEST_F(K8sApiServer, ConflictIsRetriedAndWinsKeepingTheOtherWritersTaint) {
    PF_NEEDS_STANDIN("/_test/concurrent plays another writer");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    // Between our read and our write an operator taints the node: our patch, carrying the
    // resourceVersion we read, gets 409; we read again and write both taints.
    json other = {{"key", "example.com/maintenance"}, {"value", "bios"}, {"effect", "NoSchedule"}};
    ASSERT_TRUE(m_admin->post("/_test/concurrent", {{"node", "n2"}, {"taint", other}},
                              outcome::k8s::Access{"create", "concurrent", "", ""}));
    outcome::k8s::NodeSink sink(*m_client);
    outcome::k8s::NodeChange change;
    change.node = "n2";
    change.set_taint = outcome::k8s::Taint{"preflight.dev/degraded", "link.netdev", "NoSchedule"};
    auto out = sink.apply(change);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->attempts, 2);
    json n2 = kubectl_json({"get", "node", "n2"});
    EXPECT_EQ(taint_of(n2, "example.com/maintenance"), other) << n2.dump(2);
    EXPECT_EQ(taint_of(n2, "preflight.dev/degraded")["value"], "link.netdev");
    int conflicts = 0;
    for (const auto& r : requests()) {
        conflicts += r["method"] == "PATCH" && r["path"] == "/api/v1/nodes/n2" ? 1 : 0;
    }
    EXPECT_EQ(conflicts, 2);
}

TEST_F(K8sApiServer, ForbiddenNamesTheMissingRbacVerbAndUnauthorizedIsClear) {
    PF_NEEDS_STANDIN("its per-token RBAC");
    outcome::k8s::NodeChange change;
    change.node = "n1";
    change.set_taint = outcome::k8s::Taint{"preflight.dev/degraded", "x", "NoSchedule"};
    outcome::k8s::Client limited(cluster(k_limited), outcome::k8s::ClientOptions{});
    auto out = outcome::k8s::NodeSink(limited).apply(change);
    ASSERT_FALSE(out);
    const std::string& msg = out.error().message;
    EXPECT_NE(msg.find("HTTP 403"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot patch resource \"nodes\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("grant verb 'patch' on resource 'nodes'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ClusterRole"), std::string::npos) << msg;

    outcome::k8s::Client wrong(cluster("not-a-token"), outcome::k8s::ClientOptions{});
    auto denied = wrong.get("/api/v1/nodes", outcome::k8s::Access{"list", "nodes", "", ""});
    ASSERT_FALSE(denied);
    EXPECT_NE(denied.error().message.find("HTTP 401"), std::string::npos) << denied.error().message;
    EXPECT_EQ(denied.error().message.find("not-a-token"), std::string::npos) << "token leaked";
}

TEST_F(K8sApiServer, RetriesServerErrorsAndTooManyRequestsThenGivesUp) {
    PF_NEEDS_STANDIN("/_test/faults injects the errors");
    ASSERT_TRUE(m_admin->post(
        "/_test/faults",
        {{"method", "GET"}, {"path", "/api/v1/nodes/n3"}, {"status", 503}, {"count", 2}},
        outcome::k8s::Access{"create", "faults", "", ""}));
    ASSERT_TRUE(m_admin->post(
        "/_test/faults",
        {{"method", "GET"}, {"path", "/api/v1/nodes/n3"}, {"status", 429}, {"count", 1}},
        outcome::k8s::Access{"create", "faults", "", ""}));
    outcome::k8s::ClientOptions quick;
    quick.backoff = std::chrono::milliseconds(20);
    outcome::k8s::Client c(cluster(k_token), quick);
    const auto start = std::chrono::steady_clock::now();
    auto node = c.get("/api/v1/nodes/n3", outcome::k8s::Access{"get", "nodes", "", ""});
    ASSERT_TRUE(node) << node.error().message;
    EXPECT_EQ((*node)["metadata"]["name"], "n3");
    EXPECT_EQ(count_requests("GET", "/api/v1/nodes/n3"), 4);
    // The 429 came with Retry-After: 1, which the client honours.
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));

    ASSERT_TRUE(m_admin->post(
        "/_test/faults",
        {{"method", "GET"}, {"path", "/api/v1/nodes/n1"}, {"status", 500}, {"count", 10}},
        outcome::k8s::Access{"create", "faults", "", ""}));
    quick.max_retries = 2;
    outcome::k8s::Client c2(cluster(k_token), quick);
    auto failed = c2.get("/api/v1/nodes/n1", outcome::k8s::Access{"get", "nodes", "", ""});
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("HTTP 500"), std::string::npos);
    EXPECT_EQ(count_requests("GET", "/api/v1/nodes/n1"), 3);  // first try + 2 retries
}

TEST_F(K8sApiServer, TlsIsAlwaysVerified) {
    PF_NEEDS_STANDIN("a server certificate made by this test's CA");
    outcome::k8s::ClusterConfig other = cluster(k_token);
    other.ca_file = (s_dir / "other.crt").string();
    outcome::k8s::Client c(other, outcome::k8s::ClientOptions{});
    auto r = c.get("/api/v1/nodes", outcome::k8s::Access{"list", "nodes", "", ""});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("certificate"), std::string::npos) << r.error().message;
    EXPECT_EQ(count_requests("GET", "/api/v1/nodes"), 0);

    const std::string insecure = write_kubeconfig("insecure", k_token, (s_dir / "ca.crt").string(),
                                                  "    insecure-skip-tls-verify: true\n");
    auto refused = outcome::k8s::load_cluster_config(insecure);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("always verifies TLS"), std::string::npos);

    // The CA given inline (certificate-authority-data) works as the file does.
    std::ifstream ca(s_dir / "ca.crt");
    std::string pem((std::istreambuf_iterator<char>(ca)), {});
    auto parsed = outcome::k8s::load_cluster_config(m_kubeconfig);
    ASSERT_TRUE(parsed) << parsed.error().message;
    parsed->ca_file.clear();
    parsed->ca_pem = pem;
    outcome::k8s::Client inline_ca(*parsed, outcome::k8s::ClientOptions{});
    EXPECT_TRUE(inline_ca.get("/api/v1/nodes", outcome::k8s::Access{"list", "nodes", "", ""}));
    EXPECT_EQ(parsed->namespace_name, "preflight");
}

TEST_F(K8sApiServer, OperatorTaintsAreNeverRemovedAndCertifyUntaintsOnlyPassingNodes) {
    PF_NEEDS_STANDIN("a cluster of exactly the test's nodes, and request counts");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    // Reimaged nodes join uncertified; an operator also put our key on n3 by hand (kubectl taint
    // sends a strategic merge patch) and a maintenance taint on n1.
    for (const char* n : {"n1", "n2", "n3"}) {
        auto r = run({"kubectl", "--kubeconfig", m_kubeconfig, "taint", "node", n,
                      "preflight.dev/uncertified=:NoSchedule"});
        ASSERT_TRUE(r.ok()) << r.output;
    }
    ASSERT_TRUE(run({"kubectl", "--kubeconfig", m_kubeconfig, "taint", "node", "n1",
                     "example.com/maintenance=bios:NoSchedule"})
                    .ok());
    ASSERT_TRUE(run({"kubectl", "--kubeconfig", m_kubeconfig, "taint", "node", "n3",
                     "preflight.dev/degraded=manual:NoSchedule"})
                    .ok());
    auto listed = uncertified_nodes(*m_client);
    ASSERT_TRUE(listed);
    EXPECT_EQ(*listed, (std::vector<std::string>{"n1", "n2", "n3"}));

    outcome::RunReport report = report_with(
        {{"n1", core::Verdict::pass}, {"n2", core::Verdict::fail}, {"n3", core::Verdict::pass}});
    const fs::path saved = m_dir / "report.json";
    ASSERT_TRUE(core::write_file_atomic(saved.string(), outcome::render_json(report)));
    const std::string config = (m_dir / "config.yaml").string();
    std::ofstream(config) << "k8s: {kubeconfig: " << m_kubeconfig << "}\n";

    // Dry run: decisions printed, nothing sent (the 5 PATCHes so far are kubectl's taints).
    const int patches_before = count_requests("PATCH", "/api/v1/nodes");
    ASSERT_EQ(patches_before, 5);
    auto dry = run(
        {k_bin + "/preflight", "certify", "--k8s", "--report", saved.string(), "--config", config});
    EXPECT_EQ(dry.exit_code, 1) << dry.output;  // n2 not certified
    EXPECT_NE(dry.output.find("dry run"), std::string::npos) << dry.output;
    EXPECT_EQ(count_requests("PATCH", "/api/v1/nodes"), patches_before);
    EXPECT_EQ(count_requests("POST", "/api/v1/namespaces/default/events"), 0);

    // --apply with a ledger: the decisions are also one certification there (n1 and n3 pass,
    // n2 fails); the dry run above recorded nothing.
    const std::string ledger = "sqlite:" + (m_dir / "ledger.sqlite").string();
    auto applied = run({k_bin + "/preflight", "certify", "--k8s", "--report", saved.string(),
                        "--config", config, "--apply", "--ledger", ledger});
    EXPECT_EQ(applied.exit_code, 1) << applied.output;
    EXPECT_NE(applied.output.find("2 of 3 nodes certified"), std::string::npos) << applied.output;
    for (const auto& [node, status] :
         {std::pair{"n1", "certified"}, std::pair{"n2", "failed"}, std::pair{"n3", "certified"}}) {
        auto shown =
            run({k_bin + "/preflight", "ledger", "show", node, "--ledger", ledger, "--json"});
        ASSERT_EQ(shown.exit_code, 0) << shown.output;
        EXPECT_EQ(json::parse(shown.output)["certification"]["status"], status) << shown.output;
    }

    json n1 = kubectl_json({"get", "node", "n1"});
    EXPECT_TRUE(taint_of(n1, "preflight.dev/uncertified").is_null()) << n1.dump(2);
    EXPECT_FALSE(taint_of(n1, "example.com/maintenance").is_null()) << "operator taint removed";
    json n2 = kubectl_json({"get", "node", "n2"});
    json kept = taint_of(n2, "preflight.dev/uncertified");
    ASSERT_FALSE(kept.is_null()) << n2.dump(2);
    EXPECT_EQ(kept["value"], "collective.gloo_allreduce");
    EXPECT_EQ(n2["metadata"]["annotations"]["preflight.dev/reason"], "preflight: busbw low")
        << n2.dump(2);
    EXPECT_EQ(n2["metadata"]["labels"]["preflight.dev/status"], "fail");
    json n3 = kubectl_json({"get", "node", "n3"});
    EXPECT_TRUE(taint_of(n3, "preflight.dev/uncertified").is_null());
    EXPECT_EQ(taint_of(n3, "preflight.dev/degraded")["value"], "manual")
        << "a preflight.dev/degraded taint preflight did not set was removed";
    const std::string described = kubectl_text({"describe", "node", "n2"});
    EXPECT_NE(described.find("PreflightNotCertified"), std::string::npos) << described;
}

// A preflight.dev/degraded taint an operator set by hand (kubectl taint: no owned-taints record)
// is neither replaced when its node fails nor removed when it passes; ours is removed on pass. The
// cluster-wide breaker counts our recorded taints only and refuses past the cap.
TEST_F(K8sApiServer, AForeignTaintWithOurKeyIsNeitherReplacedNorRemovedOursIsRemovedOnPass) {
    PF_NEEDS_STANDIN("the breaker counts the cluster's nodes: exactly the test's");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    ASSERT_TRUE(run({"kubectl", "--kubeconfig", m_kubeconfig, "taint", "node", "n3",
                     "preflight.dev/degraded=manual:NoSchedule"})
                    .ok());
    outcome::RunReport report = report_with(
        {{"n1", core::Verdict::fail}, {"n2", core::Verdict::pass}, {"n3", core::Verdict::fail}});
    core::ActionsConfig actions;
    actions.targets = {"k8s"};
    actions.max_action_fraction = 1.0;
    testing::plan_actions(report, actions);
    ASSERT_EQ(report.actions.size(), 2u);
    core::KubernetesConfig cfg;
    cfg.kubeconfig = m_kubeconfig;
    core::SystemCommandRunner runner;
    const auto policy = outcome::breaker_policy(actions);
    testing::apply_actions(report, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg, policy), policy);
    ASSERT_EQ(report.actions[0].node, "n1");
    EXPECT_TRUE(report.actions[0].applied) << report.actions[0].error;
    EXPECT_FALSE(report.actions[1].applied);
    EXPECT_NE(report.actions[1].error.find("left alone: taint preflight.dev/degraded=manual:"
                                           "NoSchedule was not set by preflight"),
              std::string::npos)
        << report.actions[1].error;

    json n3 = kubectl_json({"get", "node", "n3"});
    EXPECT_EQ(taint_of(n3, "preflight.dev/degraded")["value"], "manual") << n3.dump(2);
    EXPECT_FALSE(
        n3["metadata"].value("annotations", json::object()).contains("preflight.dev/owned-taints"))
        << n3.dump(2);
    EXPECT_FALSE(n3["metadata"].value("labels", json::object()).contains("preflight.dev/status"));

    // Both pass later: ours comes off n1, the operator's stays on n3.
    auto passed = certify_nodes(
        m_client.get(), report_with({{"n1", core::Verdict::pass}, {"n3", core::Verdict::pass}}),
        true);
    for (const auto& d : passed) {
        EXPECT_TRUE(d.applied) << d.node << ": " << d.error;
    }
    json n1 = kubectl_json({"get", "node", "n1"});
    EXPECT_TRUE(taint_of(n1, "preflight.dev/degraded").is_null()) << n1.dump(2);
    n3 = kubectl_json({"get", "node", "n3"});
    EXPECT_EQ(taint_of(n3, "preflight.dev/degraded")["value"], "manual") << n3.dump(2);

    // The breaker: n1 tainted by us again; with the default caps (0.10 of 3 nodes, at least 1) a
    // second node (n2) is refused, with the counts; n3's foreign taint is not counted.
    outcome::RunReport again = report_with({{"n1", core::Verdict::fail}});
    testing::plan_actions(again, actions);
    const outcome::BreakerPolicy defaults;
    testing::apply_actions(again, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg, defaults), defaults);
    ASSERT_TRUE(again.actions[0].applied) << again.actions[0].error;
    outcome::RunReport more = report_with({{"n2", core::Verdict::fail}});
    testing::plan_actions(more, actions);
    testing::apply_actions(more, runner, std::chrono::seconds(5),
                           outcome::k8s::make_action_sink(cfg, defaults), defaults);
    EXPECT_FALSE(more.actions[0].applied);
    EXPECT_EQ(more.actions[0].error.rfind(
                  "circuit breaker: marking n2 would make 2 of 3 nodes in the cluster", 0),
              0u)
        << more.actions[0].error;
    EXPECT_EQ(outcome::exit_code_for(more), 3);
    EXPECT_TRUE(taint_of(kubectl_json({"get", "node", "n2"}), "preflight.dev/degraded").is_null());
}

TEST_F(K8sApiServer, IndexedJobPerNodeAffinityPodFailuresAndCleanup) {
    PF_NEEDS_STANDIN("/_test/pod-status plays the kubelet");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    // n4 is tainted by an operator: the agents tolerate only our taints (and nvidia.com/gpu), so
    // its pod stays Pending.
    add_node("n4", json::array({{{"key", "example.com/broken"}, {"effect", "NoSchedule"}}}));
    add_node("n9");  // not in the run: no pod may land there
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    K8sJobLauncher launcher(client);
    LaunchContext ctx;
    ctx.secret = "run-secret-abc";
    ctx.run_id = "20260101T000000Z-ABC123";
    ctx.k8s.namespace_name = "preflight";
    ctx.k8s.image = "registry.example/preflight:test";
    ctx.agent_args = {"--log-level", "info"};
    std::vector<core::Node> nodes;
    for (const char* n : {"n1", "n2", "n3", "n4"}) {
        nodes.push_back(core::Node{n, "", "", {}});
        ctx.dial_address[n] = "10.1.2.3:4567";
    }
    auto failed = launcher.start(nodes, ctx);
    ASSERT_TRUE(failed.empty()) << failed.begin()->second;
    const std::string job_name = launcher.job_name();
    EXPECT_EQ(job_name, "preflight-20260101t000000z-abc123");

    json job = kubectl_json({"get", "job", job_name, "-n", "preflight"});
    EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
    EXPECT_EQ(job["spec"]["completions"], 4);
    EXPECT_EQ(job["spec"]["parallelism"], 4);
    const json pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["hostNetwork"], true);
    // One term per node: a node field selector takes a single value (tests/k8s_apiserver).
    const json terms = pod["affinity"]["nodeAffinity"]
                          ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 4u) << terms.dump();
    for (std::size_t i = 0; i < terms.size(); ++i) {
        EXPECT_EQ(terms[i]["matchFields"],
                  json::parse(R"([{"key": "metadata.name", "operator": "In", "values": ["n)" +
                              std::to_string(i + 1) + R"("]}])"));
    }
    EXPECT_EQ(pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                 [0]["topologyKey"],
              "kubernetes.io/hostname");
    EXPECT_EQ(pod["containers"][0]["volumeMounts"][0]["mountPath"], "/sys");
    EXPECT_EQ(pod["containers"][0]["volumeMounts"][0]["readOnly"], true);
    EXPECT_EQ(pod["containers"][0]["command"],
              json({"preflight-agent", "session", "--controller", "10.1.2.3:4567", "--node",
                    "$(NODE_NAME)", "--log-level", "info"}));
    EXPECT_EQ(job.dump().find("run-token-abc"), std::string::npos) << "token in the Job spec";
    std::set<std::string> tolerated;
    for (const auto& t : pod["tolerations"]) {
        tolerated.insert(t["key"].get<std::string>());
    }
    EXPECT_EQ(tolerated, (std::set<std::string>{"preflight.dev/degraded",
                                                "preflight.dev/uncertified", "nvidia.com/gpu"}));

    // One pod per node, none on n4 (untolerated taint) or n9 (not in the run).
    json pods =
        kubectl_json({"get", "pods", "-n", "preflight", "-l", "preflight.dev/run=" + job_name});
    std::map<std::string, int> per_node;
    int pending = 0;
    for (const auto& p : pods["items"]) {
        const std::string n = p["spec"].value("nodeName", std::string());
        n.empty() ? ++pending : ++per_node[n];
    }
    EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 1}, {"n2", 1}, {"n3", 1}}));
    EXPECT_EQ(pending, 1);

    // The image cannot be pulled on n2: that node is reported at once, the others are not.
    EXPECT_TRUE(launcher.exited().empty());
    ASSERT_TRUE(m_admin->post(
        "/_test/pod-status",
        {{"node", "n2"},
         {"waiting",
          {{"reason", "ImagePullBackOff"},
           {"message", "Back-off pulling image \"registry.example/preflight:test\""}}}},
        outcome::k8s::Access{"create", "pod status", "", ""}));
    // The launcher polls the pods each second: poll it, with a deadline, until it reports.
    std::map<std::string, std::string> exited;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while ((exited = launcher.exited()).empty() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(exited.size(), 1u) << "no pod reported within 15 s";
    EXPECT_NE(exited["n2"].find("ImagePullBackOff"), std::string::npos) << exited["n2"];

    launcher.stop();
    auto jobs = kubectl_json({"get", "jobs", "-n", "preflight"});
    EXPECT_TRUE(jobs["items"].empty()) << jobs.dump(2);
    auto left = kubectl_json({"get", "pods", "-n", "preflight"});
    EXPECT_TRUE(left["items"].empty()) << "pods orphaned: " << left.dump(2);
    auto secret = m_client->get("/api/v1/namespaces/preflight/secrets/" + job_name,
                                outcome::k8s::Access{"get", "secrets", "", "preflight"});
    EXPECT_FALSE(secret) << "token Secret left behind";
}

// With controller.tls on, the run's Secret also carries the CA (public) and the pods mount only
// that key read-only and pass --tls-ca to the agent; the token stays an environment variable.
TEST_F(K8sApiServer, TlsRunMountsTheCaFromTheRunSecret) {
    const std::string ca = (m_dir / "ca.pem").string();
    std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    K8sJobLauncher launcher(client);
    LaunchContext ctx;
    ctx.secret = "run-secret-tls";
    ctx.run_id = "20260101T000000Z-TLS001";
    ctx.k8s.namespace_name = "preflight";
    ctx.k8s.image = "preflight:test";
    ctx.tls_ca = ca;
    ctx.tls_server_name = "preflight-controller";
    ctx.dial_address["n1"] = "10.1.2.3:4567";
    auto failed = launcher.start({core::Node{"n1", "", "", {}}}, ctx);
    ASSERT_TRUE(failed.empty()) << failed.begin()->second;
    json job = kubectl_json({"get", "job", launcher.job_name(), "-n", "preflight"});
    const json pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["containers"][0]["command"],
              json({"preflight-agent", "session", "--controller", "10.1.2.3:4567", "--node",
                    "$(NODE_NAME)", "--tls-ca", "/etc/preflight/tls/ca.crt", "--tls-server-name",
                    "preflight-controller"}));
    EXPECT_EQ(pod["containers"][0]["volumeMounts"][1],
              json({{"name", "tls-ca"}, {"mountPath", "/etc/preflight/tls"}, {"readOnly", true}}));
    EXPECT_EQ(pod["volumes"][1]["secret"]["secretName"], launcher.job_name());
    EXPECT_EQ(pod["volumes"][1]["secret"]["items"],
              json::parse(R"([{"key": "ca.crt", "path": "ca.crt"}])"));
    auto secret = kubectl_json({"get", "secret", launcher.job_name(), "-n", "preflight"});
    EXPECT_TRUE(secret["data"].contains("ca.crt")) << secret.dump();
    EXPECT_TRUE(secret["data"].contains("PREFLIGHT_RUN_SECRET")) << secret.dump();
    launcher.stop();

    // A CA the controller cannot read fails every node before anything is created.
    K8sJobLauncher second(client);
    ctx.tls_ca = (m_dir / "missing.pem").string();
    auto refused = second.start({core::Node{"n1", "", "", {}}}, ctx);
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_NE(refused["n1"].find("cannot read controller.tls.ca"), std::string::npos)
        << refused["n1"];
    EXPECT_TRUE(kubectl_json({"get", "jobs", "-n", "preflight"})["items"].empty());
}

// `preflight run --launcher k8s` end to end: the controller creates the Job; this test plays the
// kubelet for the pods the stand-in scheduled, starting the real agent with the Job's own command
// (and $(NODE_NAME) expanded) and the token from the run's Secret. n2's image cannot be pulled.
TEST_F(K8sApiServer, RunWithK8sLauncherEndToEnd) {
    PF_NEEDS_STANDIN("the test plays the kubelet for the stand-in's pods");
    add_node("n4");
    const std::string config = (m_dir / "config.yaml").string();
    std::ofstream(config) << "checks: [link.netdev]\n"
                             "deadlines: {connect_s: 20}\n"
                             "actions: {targets: [k8s]}\n"
                             "k8s: {kubeconfig: "
                          << m_kubeconfig << ", image: preflight:test}\n";
    auto controller = core::ChildProcess::spawn(
        {k_bin + "/preflight", "run", "--nodes", "n[1-4]", "--launcher", "k8s", "--config", config,
         "--listen", "127.0.0.1", "--advertise", "127.0.0.1", "--report-dir",
         (m_dir / "report").string(), "--no-progress"},
        {}, (m_dir / "controller.log").string());
    ASSERT_TRUE(controller) << controller.error().message;

    const std::string ns = "/api/v1/namespaces/preflight";
    json pods;
    for (int i = 0; i < 200; ++i) {
        auto r = m_client->get(ns + "/pods", outcome::k8s::Access{"list", "pods", "", "preflight"});
        if (r && (*r)["items"].size() == 4) {
            pods = (*r)["items"];
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(pods.size(), 4u) << "the controller created no Job";
    ASSERT_TRUE(m_admin->post(
        "/_test/pod-status",
        {{"node", "n2"},
         {"waiting", {{"reason", "ImagePullBackOff"}, {"message", "Back-off pulling image"}}}},
        outcome::k8s::Access{"create", "pod status", "", ""}));
    std::vector<core::ChildProcess> agents;
    for (const auto& pod : pods) {
        const std::string node = pod["spec"]["nodeName"];
        if (node == "n2") {
            continue;
        }
        const json& c = pod["spec"]["containers"][0];
        const std::string secret_name = c["env"][1]["valueFrom"]["secretKeyRef"]["name"];
        auto secret = m_client->get(ns + "/secrets/" + secret_name,
                                    outcome::k8s::Access{"get", "secrets", "", "preflight"});
        ASSERT_TRUE(secret) << secret.error().message;
        auto token =
            core::base64_decode((*secret)["data"]["PREFLIGHT_RUN_SECRET"].get<std::string>());
        ASSERT_TRUE(token);
        std::vector<std::string> argv;
        for (const auto& a : c["command"]) {
            std::string arg = a;
            if (arg == "$(NODE_NAME)") {
                arg = node;
            }
            argv.push_back(argv.empty() ? k_bin + "/" + arg : arg);
        }
        auto agent = core::ChildProcess::spawn(
            argv, {{"PREFLIGHT_RUN_SECRET", std::string(token->begin(), token->end())}},
            (m_dir / (node + ".log")).string());
        ASSERT_TRUE(agent) << agent.error().message;
        agents.push_back(std::move(agent.value()));
    }
    ASSERT_TRUE(controller->wait_for(std::chrono::seconds(60)));
    EXPECT_EQ(WEXITSTATUS(*controller->exit_status()), 4);  // n2 could not be judged

    std::ifstream in(m_dir / "report" / "report.json");
    auto report = json::parse(in);
    std::map<std::string, json> nodes;
    for (const auto& n : report.at("nodes")) {
        nodes[n.at("name").get<std::string>()] = n;
    }
    EXPECT_NE(nodes.at("n1").at("verdict"), "error") << nodes.at("n1").dump();
    EXPECT_NE(nodes.at("n3").at("verdict"), "error") << nodes.at("n3").dump();
    EXPECT_NE(nodes.at("n4").at("verdict"), "error") << nodes.at("n4").dump();
    EXPECT_EQ(nodes.at("n2").at("verdict"), "error");
    EXPECT_NE(nodes.at("n2").at("reasons").dump().find("ImagePullBackOff"), std::string::npos)
        << nodes.at("n2").dump();
    // Cleaned up: no Job, no pods, no Secret.
    auto jobs = m_client->get("/apis/batch/v1/namespaces/preflight/jobs",
                              outcome::k8s::Access{"list", "jobs", "batch", "preflight"});
    ASSERT_TRUE(jobs);
    EXPECT_TRUE((*jobs)["items"].empty());
    auto left = m_client->get(ns + "/pods", outcome::k8s::Access{"list", "pods", "", "preflight"});
    ASSERT_TRUE(left);
    EXPECT_TRUE((*left)["items"].empty());
    EXPECT_EQ(count_requests("DELETE", ns + "/secrets/"), 1);
}

// --launcher k8s on GPU nodes: the pod template of the run config (core/k8s_pod_template.hpp)
// merged into the agent Job, the default nvidia.com/gpu:NoSchedule toleration, and every pod
// asking for all GPUs of its node (the minimum allocatable over the run's nodes, read through the
// API) when the run has GPU checks. The stand-in schedules by nodeSelector, taints and extended
// resources, so the pods land only where the real scheduler would put them.
const char* k_gpu_template = R"(
k8s:
  image: registry.example/preflight:1
  pod_template:
    metadata:
      labels: {team: ml}
    spec:
      runtimeClassName: nvidia
      nodeSelector: {nvidia.com/gpu.product: H100}
      tolerations:
        - {key: example.com/rdma, operator: Exists, effect: NoSchedule}
      containers:
        - name: agent
          resources:
            limits: {rdma/rdma_shared_device_a: 1, memory: 64Gi}
            requests: {rdma/rdma_shared_device_a: 1, cpu: 4}
          securityContext:
            capabilities: {add: [IPC_LOCK]}
          env:
            - {name: NCCL_IB_HCA, value: mlx5}
            - {name: NCCL_DEBUG, value: INFO}
          volumeMounts:
            - {name: dshm, mountPath: /dev/shm}
      volumes:
        - name: dshm
          emptyDir: {medium: Memory, sizeLimit: 64Gi}
)";

core::KubernetesConfig gpu_config(const std::string& extra = {}) {
    return core::parse_config(std::string("checks: [link.netdev]\n") + k_gpu_template + extra,
                              "gpu.yaml", plugins::param_catalog())
        .k8s;
}

TEST_F(K8sApiServer, GpuPodsCarryTheTemplateTheGpuTolerationAndAllGpusOfTheirNode) {
    PF_NEEDS_STANDIN("pods are placed on nodes with no kubelet");
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    add_runtime_class("nvidia");  // else the RuntimeClass admission refuses every pod
    const json gpu_taint =
        json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}});
    const json h100 = {{"nvidia.com/gpu.product", "H100"}};
    const json eight = {{"nvidia.com/gpu", "8"}, {"rdma/rdma_shared_device_a", "1k"}};
    add_node("g1", gpu_taint, eight, h100);
    add_node("g2", gpu_taint, eight, h100);
    add_node("g3", gpu_taint, eight, {{"nvidia.com/gpu.product", "A100"}});  // selector misses
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    K8sJobLauncher launcher(client);
    LaunchContext ctx;
    ctx.secret = "run-secret-gpu";
    ctx.run_id = "20260101T000000Z-GPU001";
    ctx.k8s = gpu_config();
    ctx.k8s.namespace_name = "preflight";
    ctx.gpu_checks = true;  // k8s.gpus_per_node unset: read from the nodes' allocatable
    std::vector<core::Node> nodes;
    for (const char* n : {"g1", "g2", "g3"}) {
        nodes.push_back(core::Node{n, "", "", {}});
        ctx.dial_address[n] = "10.1.2.3:4567";
    }
    auto failed = launcher.start(nodes, ctx);
    ASSERT_TRUE(failed.empty()) << failed.begin()->second;
    EXPECT_EQ(count_requests("GET", "/api/v1/nodes"), 1) << "one list, not one GET per node";

    // What kubectl sees in the Job: the merge rules of integrations/k8s/pod_template_merge.hpp.
    json job = kubectl_json({"get", "job", launcher.job_name(), "-n", "preflight"});
    const json pod = job["spec"]["template"];
    EXPECT_EQ(pod["metadata"]["labels"]["team"], "ml");
    EXPECT_EQ(pod["metadata"]["labels"]["preflight.dev/run"], launcher.job_name());
    const json spec = pod["spec"];
    EXPECT_EQ(spec["runtimeClassName"], "nvidia");
    EXPECT_EQ(spec["hostNetwork"], true);
    EXPECT_EQ(spec["nodeSelector"], json({{"nvidia.com/gpu.product", "H100"}}));
    std::set<std::string> tolerated;
    for (const auto& t : spec["tolerations"]) {
        tolerated.insert(t["key"].get<std::string>());
    }
    EXPECT_EQ(tolerated,
              (std::set<std::string>{"preflight.dev/degraded", "preflight.dev/uncertified",
                                     "nvidia.com/gpu", "example.com/rdma"}));
    // Preflight's pinning is still there, whatever the template adds: a term per node.
    const json terms = spec["affinity"]["nodeAffinity"]
                           ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 3u) << terms.dump();
    EXPECT_EQ(terms[2]["matchFields"][0]["values"], json({"g3"}));
    const json agent = spec["containers"][0];
    EXPECT_EQ(agent["resources"]["limits"]["nvidia.com/gpu"], 8);
    EXPECT_EQ(agent["resources"]["limits"]["rdma/rdma_shared_device_a"], 1);
    EXPECT_EQ(agent["resources"]["requests"]["cpu"], 4);
    EXPECT_EQ(agent["securityContext"]["capabilities"]["add"], json({"IPC_LOCK"}));
    EXPECT_EQ(agent["securityContext"]["allowPrivilegeEscalation"], false);
    EXPECT_EQ(agent["env"][0]["name"], "NODE_NAME");
    EXPECT_EQ(agent["env"][1]["name"], "PREFLIGHT_RUN_SECRET");
    EXPECT_EQ(agent["env"][2], json({{"name", "NCCL_IB_HCA"}, {"value", "mlx5"}}));
    EXPECT_EQ(agent["command"][0], "preflight-agent");
    json shm;
    for (const auto& v : spec["volumes"]) {
        if (v["name"] == "dshm") {
            shm = v;
        }
    }
    EXPECT_EQ(shm["emptyDir"], json({{"medium", "Memory"}, {"sizeLimit", "64Gi"}}))
        << spec["volumes"].dump();

    // Scheduled past the nvidia.com/gpu taint on g1 and g2; g3 is not an H100 and gets no pod.
    json pods = kubectl_json(
        {"get", "pods", "-n", "preflight", "-l", "preflight.dev/run=" + launcher.job_name()});
    std::map<std::string, std::string> placed;
    std::string pending;
    for (const auto& p : pods["items"]) {
        const std::string n = p["spec"].value("nodeName", std::string());
        if (n.empty()) {
            pending = p["status"]["conditions"][0]["message"];
        } else {
            placed[n] = p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].dump();
        }
    }
    EXPECT_EQ(placed, (std::map<std::string, std::string>{{"g1", "8"}, {"g2", "8"}}));
    EXPECT_NE(pending.find("didn't match Pod's node affinity/selector"), std::string::npos)
        << pending;
    launcher.stop();
}

TEST_F(K8sApiServer, GpuCountIsTheSmallestNodeAndAPodAskingMoreStaysPending) {
    PF_NEEDS_STANDIN("pods are placed on nodes with no kubelet");
    add_node("g1", json::array(), {{"nvidia.com/gpu", "8"}});
    add_node("g2", json::array(), {{"nvidia.com/gpu", "4"}});
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    LaunchContext ctx;
    ctx.secret = "run-secret-gpu";
    ctx.run_id = "20260101T000000Z-GPU002";
    ctx.k8s.namespace_name = "preflight";
    ctx.k8s.image = "preflight:test";
    ctx.gpu_checks = true;
    std::vector<core::Node> nodes = {core::Node{"g1", "", "", {}}, core::Node{"g2", "", "", {}}};
    ctx.dial_address = {{"g1", "10.0.0.1:1"}, {"g2", "10.0.0.1:1"}};
    {
        K8sJobLauncher launcher(client);
        ASSERT_TRUE(launcher.start(nodes, ctx).empty());
        auto job = m_client->get("/apis/batch/v1/namespaces/preflight/jobs/" + launcher.job_name(),
                                 outcome::k8s::Access{"get", "jobs", "batch", "preflight"});
        ASSERT_TRUE(job);
        EXPECT_EQ((*job)["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                        ["nvidia.com/gpu"],
                  4);
        launcher.stop();
    }
    // k8s.gpus_per_node: 8 on purpose: g2 has 4, so its pod cannot be placed.
    ctx.k8s.gpus_per_node = 8;
    ctx.run_id = "20260101T000000Z-GPU003";
    K8sJobLauncher launcher(client);
    ASSERT_TRUE(launcher.start(nodes, ctx).empty());
    auto pods =
        m_client->get("/api/v1/namespaces/preflight/pods?labelSelector=" +
                          outcome::k8s::url_escape("preflight.dev/run=" + launcher.job_name()),
                      outcome::k8s::Access{"list", "pods", "", "preflight"});
    ASSERT_TRUE(pods);
    std::string pending;
    int scheduled = 0;
    for (const auto& p : (*pods)["items"]) {
        if (p["spec"].value("nodeName", std::string()).empty()) {
            pending = p["status"]["conditions"][0]["message"];
        } else {
            ++scheduled;
        }
    }
    EXPECT_EQ(scheduled, 1);
    EXPECT_NE(pending.find("Insufficient nvidia.com/gpu"), std::string::npos) << pending;
    launcher.stop();
}

// The stand-in refuses what kube-apiserver v1.34 refuses (tests/k8s_apiserver/REAL_SERVER.md), with
// the same Status: 422 for a field, 400 for a quantity that does not decode; the launcher reports
// it for every node. Templates built in code skip the config loader's checks, which is how these
// reach the API server here.
TEST_F(K8sApiServer, TheApiServerRefusesInvalidPodFieldsWith422) {
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    struct Case {
        json tmpl;
        std::string message;
        std::string status = "HTTP 422";
    };
    const std::vector<Case> cases = {
        {json::parse(R"({"spec": {"containers": [{"name": "agent", "resources": {
              "limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "4"}}}]}})"),
         "spec.template.spec.containers[0].resources.requests: Invalid value: \"4\": must be "
         "equal to nvidia.com/gpu limit of 8"},
        {json::parse(R"({"spec": {"containers": [{"name": "agent", "resources": {
              "limits": {"rdma/hca": "0.5"}}}]}})"),
         "spec.template.spec.containers[0].resources.limits[rdma/hca]: Invalid value: \"500m\": "
         "must be an integer"},
        {json::parse(R"({"spec": {"containers": [{"name": "agent", "resources": {
              "requests": {"memory": "64 GiB"}}}]}})"),
         "Job in version \"v1\" cannot be handled as a Job: quantities must match the regular "
         "expression",
         "HTTP 400"},
        {json::parse(R"({"spec": {"tolerations": [{"key": "a", "operator": "Exists",
              "value": "x"}]}})"),
         "spec.template.spec.tolerations[3].operator: Invalid value: \"Exists\": value must be "
         "empty when `operator` is 'Exists'"},
        {json::parse(R"({"spec": {"tolerations": [{"key": "a", "operator": "In"}]}})"),
         "spec.template.spec.tolerations[3].operator: Unsupported value: \"In\": supported "
         "values: \"Equal\", \"Exists\""},
        {json::parse(R"({"spec": {"runtimeClassName": "Nvidia_Runtime"}})"),
         "spec.template.spec.runtimeClassName: Invalid value: \"Nvidia_Runtime\""},
        {json::parse(R"({"spec": {"containers": [{"name": "agent", "env": [
              {"name": "NCCL=1", "value": "x"}]}]}})"),
         "spec.template.spec.containers[0].env[2].name: Invalid value: \"NCCL=1\": a valid "
         "environment variable name must consist only of printable ASCII characters other than "
         "'='"},
        {json::parse(R"({"spec": {"containers": [{"name": "agent", "securityContext": {
              "privileged": true, "allowPrivilegeEscalation": false}}]}})"),
         "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"},
    };
    int i = 0;
    for (const auto& c : cases) {
        LaunchContext ctx;
        ctx.secret = "s";
        ctx.run_id = "20260101T000000Z-BAD00" + std::to_string(i++);
        ctx.k8s.namespace_name = "preflight";
        ctx.k8s.image = "preflight:test";
        ctx.k8s.pod_template = c.tmpl;
        ctx.dial_address["n1"] = "10.0.0.1:1";
        K8sJobLauncher launcher(client);
        auto failed = launcher.start({core::Node{"n1", "", "", {}}}, ctx);
        ASSERT_EQ(failed.size(), 1u) << c.tmpl.dump();
        EXPECT_NE(failed["n1"].find(c.status), std::string::npos) << failed["n1"];
        EXPECT_NE(failed["n1"].find(c.message), std::string::npos) << failed["n1"];
        launcher.stop();
    }
    auto jobs = m_client->get("/apis/batch/v1/namespaces/preflight/jobs",
                              outcome::k8s::Access{"list", "jobs", "batch", "preflight"});
    ASSERT_TRUE(jobs);
    EXPECT_TRUE((*jobs)["items"].empty()) << "a refused Job was stored";
}

// `preflight run --launcher k8s --dry-run` for 512 GPU nodes with 8 GPUs per node: the YAML shows
// the merged template and is what the API server accepts (kubectl apply --dry-run=server against
// the stand-in validates it without creating anything).
TEST_F(K8sApiServer, DryRunYamlForFiveHundredTwelveGpuNodesIsAcceptedByTheApiServer) {
    if (!have_kubectl()) {
        GTEST_SKIP() << "kubectl not installed";
    }
    const std::string config = (m_dir / "gpu.yaml").string();
    std::ofstream(config) << "checks: [link.netdev, collective.nccl_allreduce]\n"
                          << k_gpu_template << "  gpus_per_node: 8\n";
    auto dry = run({k_bin + "/preflight", "--log-level", "error", "run", "--launcher", "k8s",
                    "--dry-run", "--nodes", "gpu[001-512]", "--config", config, "--advertise",
                    "10.0.0.5", "--port", "7070"});
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    EXPECT_NE(dry.output.find("nvidia.com/gpu: 8\n"), std::string::npos) << dry.output;
    EXPECT_NE(dry.output.find("runtimeClassName: nvidia"), std::string::npos);
    EXPECT_NE(dry.output.find("key: nvidia.com/gpu\n"), std::string::npos);
    EXPECT_NE(dry.output.find("- IPC_LOCK"), std::string::npos);
    EXPECT_NE(dry.output.find("gpu512"), std::string::npos);
    if (!real_server()) {
        EXPECT_EQ(count_requests("GET", "/api"), 0) << "a dry run asked the API server";
    }
    // Only the YAML documents (the dry run's own comment lines are YAML comments anyway).
    core::ProcessOptions o;
    o.timeout = std::chrono::seconds(60);
    o.stdin_data = dry.output;
    auto applied = core::run_process({"kubectl", "--kubeconfig", m_kubeconfig, "apply",
                                      "--dry-run=server", "--validate=false", "-f", "-"},
                                     o);
    ASSERT_TRUE(applied);
    EXPECT_TRUE(applied->ok()) << applied->output;
    EXPECT_NE(applied->output.find("created (server dry run)"), std::string::npos)
        << applied->output;
    if (real_server()) {
        return;
    }
    int dry_posts = 0;
    for (const auto& r : requests()) {
        if (r["method"] == "POST" &&
            r["path"].get<std::string>().find("dryRun=All") != std::string::npos) {
            ++dry_posts;
        }
    }
    EXPECT_EQ(dry_posts, 2);  // the Secret and the Job, validated, not stored
    EXPECT_TRUE(kubectl_json({"get", "jobs", "-n", "preflight"})["items"].empty());
}

}  // namespace
}  // namespace preflight::controller::k8s
