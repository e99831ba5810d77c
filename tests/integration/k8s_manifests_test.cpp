// manifests/k8s renders with the real `kubectl kustomize` and every object validates against the
// Kubernetes OpenAPI schema (tests/k8s_manifests/validate.js: the kubernetes-models package's
// validators, generated from the Kubernetes 1.27 spec). A deliberately broken Job must be refused,
// so a validator that accepts everything would fail this test.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/launch/k8s_job_launcher.hpp"
#include "core/build_info.hpp"
#include "core/process.hpp"

namespace {

const std::string k_src = PREFLIGHT_SOURCE_DIR;

preflight::core::ProcessResult run(const std::vector<std::string>& argv,
                                   const std::string& stdin_data = {}) {
    preflight::core::ProcessOptions o;
    o.timeout = std::chrono::seconds(60);
    o.stdin_data = stdin_data;
    auto r = preflight::core::run_process(argv, o);
    EXPECT_TRUE(r) << argv[0] << ": " << (r ? "" : r.error().message);
    return r ? *r : preflight::core::ProcessResult{};
}

bool tools_present(std::string& why) {
    auto k = preflight::core::run_process({"kubectl", "version", "--client"}, {});
    if (!k || !k->ok()) {
        why = "kubectl not installed (scripts/install_deps.sh installs it)";
        return false;
    }
    auto n = preflight::core::run_process(
        {"node", "-e",
         "require('" + k_src + "/tests/k8s_manifests/node_modules/kubernetes-models')"},
        {});
    if (!n || !n->ok()) {
        why = "node or tests/k8s_manifests/node_modules missing (scripts/install_deps.sh: npm ci)";
        return false;
    }
    return true;
}

// Renders dir with kubectl kustomize (Debian's kubectl 1.20 has no -o for it: stdout, which
// kustomize does not share with warnings unless something is wrong, and then validation fails).
std::string render(const std::string& dir) {
    auto r = run({"kubectl", "kustomize", dir});
    EXPECT_TRUE(r.ok()) << r.output;
    return r.output;
}

void expect_valid(const std::string& dir, int objects) {
    const std::string yaml = render(k_src + "/manifests/k8s/" + dir);
    ASSERT_FALSE(yaml.empty());
    auto v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, yaml);
    EXPECT_TRUE(v.ok()) << v.output;
    EXPECT_NE(v.output.find(std::to_string(objects) + " valid, 0 invalid"), std::string::npos)
        << v.output;
}

TEST(K8sManifests, BaseRendersAndValidatesAgainstTheOpenApiSchema) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    // Namespace, 2 ServiceAccounts, ClusterRole(+Binding), 2 Roles(+Bindings), ConfigMap, Service,
    // controller Job, certification CronJob.
    expect_valid(".", 13);
    const std::string yaml = render(k_src + "/manifests/k8s");
    // The image kustomize sets on the Jobs, the one config.yaml gives the agents, and the one
    // scripts/image.sh builds (localhost/preflight:<project version>) are the same.
    const std::string image =
        "localhost/preflight:" + std::string(preflight::core::build_version());
    EXPECT_NE(yaml.find("image: " + image + "\n"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("image: " + image + "  # the same image"), std::string::npos) << yaml;
    EXPECT_EQ(yaml.find("image: preflight\n"), std::string::npos) << "an image kustomize missed";
    // Least privilege: nothing may grant wildcards or access to everything.
    EXPECT_EQ(yaml.find("'*'"), std::string::npos);
    EXPECT_EQ(yaml.find("\"*\""), std::string::npos);
}

TEST(K8sManifests, ExamplesRenderAndValidate) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    expect_valid("examples", 3);  // agent Job, gate ConfigMap, gate Job
}

// The Job and Secret `--launcher k8s` sends are held to the same schema as the manifests.
TEST(K8sManifests, LauncherJobAndSecretValidate) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    preflight::controller::k8s::JobSpecInput in;
    in.run_id = "20260101T000000Z-abc123";
    in.name = preflight::controller::k8s::job_name_for(in.run_id);
    in.namespace_name = "preflight";
    in.nodes = {"gpu001", "gpu002", "gpu003"};
    in.image = "localhost/preflight:0.2.0";
    in.service_account = "preflight-agent";
    in.controller = "10.0.0.5:7070";
    in.agent_args = {"--log-level", "info"};
    const std::string docs = preflight::controller::k8s::agent_job(in).dump() + "\n---\n" +
                             preflight::controller::k8s::token_secret(in, "t").dump() + "\n";
    auto v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, docs);
    EXPECT_TRUE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("2 valid, 0 invalid"), std::string::npos) << v.output;
}

TEST(K8sManifests, ValidatorRefusesABrokenJob) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    const std::string broken =
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n"
        "spec:\n  completions: four\n  template:\n    spec:\n      restartPolicy: Sometimes\n"
        "      containers: [{name: c, image: busybox}]\n";
    auto v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, broken);
    EXPECT_FALSE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("completions must be integer"), std::string::npos) << v.output;
    auto unknown = run({"node", k_src + "/tests/k8s_manifests/validate.js"},
                       "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n");
    EXPECT_FALSE(unknown.ok()) << "an unknown kind passed unchecked: " << unknown.output;
}

}  // namespace
