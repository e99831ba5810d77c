// manifests/k8s renders with the real `kubectl kustomize` and every object validates against the
// Kubernetes OpenAPI schema (tests/k8s_manifests/validate.js: the kubernetes-models package's
// validators, generated from the Kubernetes 1.27 spec). A deliberately broken Job must be refused,
// so a validator that accepts everything would fail this test.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/build_info.hpp"
#include "core/process.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"

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
    // agent Job; init gate: ConfigMap, Job; node health: ServiceAccount, ClusterRole(+Binding),
    // Role(+Binding), ConfigMap, DaemonSet; JobSet gang gate: ServiceAccount, Role(+Binding),
    // ClusterRole(+Binding), Role(+Binding), 2 ConfigMaps, JobSet; PyTorchJob gang gate:
    // ConfigMap, Service, Job, PyTorchJob.
    expect_valid("examples", 24);
    const std::string yaml = render(k_src + "/manifests/k8s/examples");
    EXPECT_EQ(yaml.find("'*'"), std::string::npos);
    EXPECT_EQ(yaml.find("\"*\""), std::string::npos);
}

// The custom resources of the gang-gate examples are checked, not waved through: an unknown
// field of the JobSet and a bad Job template inside it are refused.
TEST(K8sManifests, ValidatorChecksJobSetAndPyTorchJob) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    const std::string typo =
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: x}\n"
        "spec:\n  replicatedJob: []\n";
    auto v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, typo);
    EXPECT_FALSE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("unknown field \"replicatedJob\""), std::string::npos) << v.output;
    const std::string bad_template =
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: x}\n"
        "spec:\n  replicatedJobs:\n  - name: a\n    template:\n      spec:\n"
        "        completions: four\n        template: {spec: {containers: [{name: c}]}}\n";
    v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, bad_template);
    EXPECT_FALSE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("completions must be integer"), std::string::npos) << v.output;
    const std::string pytorch =
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec:\n"
        "  pytorchReplicaSpecs:\n    Worker:\n      restartPolicy: Sometimes\n"
        "      template: {spec: {containers: [{name: pytorch, image: i}]}}\n";
    v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, pytorch);
    EXPECT_FALSE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("restartPolicy"), std::string::npos) << v.output;
}

// `preflight run --launcher k8s --dry-run` for gpu[001-512] with a config asking 8 GPUs per node
// and a GPU cluster's pod template: the printed Secret and Job carry nvidia.com/gpu: 8, the
// default nvidia.com/gpu toleration and the template's fields, and validate against the schema.
TEST(K8sManifests, DryRunOfAGpuRunPrintsAValidJobWithTheGpusAndTheTemplate) {
    std::string why;
    if (!tools_present(why)) {
        GTEST_SKIP() << why;
    }
    const std::string config = (std::filesystem::temp_directory_path() /
                                ("pf-dry-" + std::to_string(::getpid()) + ".yaml"))
                                   .string();
    std::ofstream(config) << R"(checks: [link.netdev, collective.nccl_allreduce]
k8s:
  image: registry.example/preflight:1
  gpus_per_node: 8
  pod_template:
    spec:
      runtimeClassName: nvidia
      tolerations: [{key: example.com/rdma, operator: Exists, effect: NoSchedule}]
      containers:
        - name: agent
          resources:
            limits: {rdma/rdma_shared_device_a: 1}
          securityContext: {capabilities: {add: [IPC_LOCK]}}
          env: [{name: NCCL_IB_HCA, value: mlx5}]
)";
    auto dry = run({std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight", "--log-level", "error",
                    "run", "--launcher", "k8s", "--dry-run", "--nodes", "gpu[001-512]", "--config",
                    config, "--advertise", "10.0.0.5", "--port", "7070"});
    std::filesystem::remove(config);
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    for (const char* want :
         {"kind: Job\n", "completions: 512\n", "nvidia.com/gpu: 8\n", "key: nvidia.com/gpu\n",
          "runtimeClassName: nvidia\n", "rdma/rdma_shared_device_a: 1\n", "- IPC_LOCK\n",
          "name: NCCL_IB_HCA\n", "mountPath: /dev/shm\n", "medium: Memory\n", "- gpu512\n",
          "# nvidia.com/gpu: 8 per agent pod (k8s.gpus_per_node)"}) {
        EXPECT_NE(dry.output.find(want), std::string::npos) << want << " missing:\n" << dry.output;
    }
    auto v = run({"node", k_src + "/tests/k8s_manifests/validate.js"}, dry.output);
    EXPECT_TRUE(v.ok()) << v.output;
    EXPECT_NE(v.output.find("2 valid, 0 invalid"), std::string::npos) << v.output;
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
