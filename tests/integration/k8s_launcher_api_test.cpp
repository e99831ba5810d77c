// The k8s launcher against the rules of a real kube-apiserver v1.34 that the stand-in now keeps
// (tests/k8s_apiserver/REAL_SERVER.md): pods pinned one node-affinity term per node (a node field
// selector takes one value), and pods the API server refuses at creation (a missing ServiceAccount
// or RuntimeClass: the Job exists, no pod does) named in each node's error from the Job
// controller's FailedCreate Event.
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "tests/integration/k8s_standin.hpp"

namespace preflight::controller::k8s {
namespace {

LaunchContext context(const std::string& run_id, const std::vector<core::Node>& nodes) {
    LaunchContext ctx;
    ctx.secret = "run-secret-" + run_id;
    ctx.run_id = run_id;
    ctx.k8s.namespace_name = "preflight";
    ctx.k8s.image = "registry.example/preflight:test";
    for (const auto& n : nodes) {
        ctx.dial_address[n.name] = "10.1.2.3:4567";
    }
    return ctx;
}

std::vector<core::Node> nodes_named(std::initializer_list<const char*> names) {
    std::vector<core::Node> out;
    for (const char* n : names) {
        out.push_back(core::Node{n, "", "", {}});
    }
    return out;
}

// Today's form (one term listing all nodes) is refused by the API server with 422; the launcher
// must send one term per node, each with one value, and one pod lands on each node.
TEST_F(K8sApiServer, FourNodesArePinnedOneTermPerNodeAndTheApiServerAcceptsTheJob) {
    add_node("n4");
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    K8sJobLauncher launcher(client);
    const auto nodes = nodes_named({"n1", "n2", "n3", "n4"});
    auto failed = launcher.start(nodes, context("20260101T000000Z-PIN004", nodes));
    ASSERT_TRUE(failed.empty()) << failed.begin()->second;
    auto job = m_client->get("/apis/batch/v1/namespaces/preflight/jobs/" + launcher.job_name(),
                             outcome::k8s::Access{"get", "jobs", "batch", "preflight"});
    ASSERT_TRUE(job) << job.error().message;
    const json terms =
        (*job)["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
              ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    ASSERT_EQ(terms.size(), 4u) << terms.dump();
    for (const auto& term : terms) {
        ASSERT_EQ(term["matchFields"].size(), 1u) << term.dump();
        EXPECT_EQ(term["matchFields"][0]["values"].size(), 1u) << term.dump();
    }
    if (!real_server()) {  // a real cluster's nodes made here have no kubelet, nor do pods run
        auto pods = m_client->get("/api/v1/namespaces/preflight/pods",
                                  outcome::k8s::Access{"list", "pods", "", "preflight"});
        ASSERT_TRUE(pods);
        std::set<std::string> placed;
        for (const auto& p : (*pods)["items"]) {
            placed.insert(p["spec"].value("nodeName", std::string()));
            // What the Job controller adds to an Indexed Job's pods.
            EXPECT_EQ(p["spec"]["hostname"],
                      launcher.job_name() + "-" +
                          p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
                              .get<std::string>());
            EXPECT_EQ(p["status"]["phase"], "Pending") << "no kubelet: bound pods stay Pending";
        }
        EXPECT_EQ(placed, (std::set<std::string>{"n1", "n2", "n3", "n4"}));
    }
    launcher.stop();
}

// The launcher alone: a missing RuntimeClass makes every pod be refused at creation; the nodes
// left without a pod get the refusal, as the API server worded it, from not_started().
TEST_F(K8sApiServer, NotStartedNamesTheRefusalOfAPodNeverCreated) {
    auto client =
        std::make_shared<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
    K8sJobLauncher launcher(client);
    const auto nodes = nodes_named({"n1", "n2"});
    LaunchContext ctx = context("20260101T000000Z-NORC01", nodes);
    ctx.k8s.pod_template = json::parse(R"({"spec": {"runtimeClassName": "pf-missing"}})");
    auto failed = launcher.start(nodes, ctx);
    ASSERT_TRUE(failed.empty()) << "the Job itself is accepted: " << failed.begin()->second;
    std::map<std::string, std::string> why;
    for (int i = 0; i < 60 && why.size() < 2; ++i) {  // a real controller needs a moment
        why = launcher.not_started();
        std::this_thread::sleep_for(std::chrono::milliseconds(real_server() ? 500 : 0));
    }
    ASSERT_EQ(why.size(), 2u);
    for (const auto& [node, text] : why) {
        EXPECT_NE(text.find("2 of 2 agent pods were never created"), std::string::npos) << text;
        EXPECT_NE(text.find("FailedCreate: Error creating: pods \"" + launcher.job_name() +
                            "-0-\" is forbidden: pod rejected: RuntimeClass \"pf-missing\" "
                            "not found"),
                  std::string::npos)
            << node << ": " << text;
    }
    launcher.stop();
}

// `preflight run --launcher k8s` when the agents' ServiceAccount does not exist: the Job is
// created, no pod ever is; each node's error in the report says why instead of only "agent did
// not connect".
TEST_F(K8sApiServer, APodRefusedAtCreationIsNamedInEachNodesErrorInTheReport) {
    const std::string config = (m_dir / "config.yaml").string();
    std::ofstream(config) << "checks: [link.netdev]\n"
                             "deadlines: {connect_s: "
                          << (real_server() ? 30 : 3)
                          << "}\n"
                             "k8s: {kubeconfig: "
                          << m_kubeconfig
                          << ", image: preflight:test, service_account: pf-no-such-sa}\n";
    auto r = run({k_bin + "/preflight", "run", "--nodes", "n[1-3]", "--launcher", "k8s", "--config",
                  config, "--listen", "127.0.0.1", "--advertise", "127.0.0.1", "--report-dir",
                  (m_dir / "report").string(), "--no-progress"},
                 90);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("the Job controller cannot create agent pods"), std::string::npos)
        << "no live warning: " << r.output;
    std::ifstream in(m_dir / "report" / "report.json");
    ASSERT_TRUE(in) << r.output;
    const json report = json::parse(in);
    int named = 0;
    for (const auto& n : report.at("nodes")) {
        const std::string reasons = n.at("reasons").dump();
        EXPECT_EQ(n.at("verdict"), "error") << n.dump();
        EXPECT_NE(reasons.find("agent did not connect within"), std::string::npos) << reasons;
        EXPECT_NE(reasons.find("error looking up service account preflight/pf-no-such-sa: "
                               "serviceaccount \\\"pf-no-such-sa\\\" not found"),
                  std::string::npos)
            << reasons;
        ++named;
    }
    EXPECT_EQ(named, 3);
}

}  // namespace
}  // namespace preflight::controller::k8s
