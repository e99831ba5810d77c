// k8s.pod_template and k8s.gpus_per_node in the run configuration (core/k8s_pod_template.hpp):
// what is accepted as written, and that everything the launcher would refuse or the API server
// would answer with 422 is a config error at its file:line naming the field. Quantities and names
// follow apimachinery (core/k8s_names.hpp); expected values are written by hand from its rules.
#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/config_error.hpp"
#include "core/k8s_names.hpp"

namespace preflight::core {
namespace {

using nlohmann::json;

RunConfig parse(const std::string& k8s) {
    const ParamCatalog catalog = {{"link.netdev", {}}, {"collective.gloo_allreduce", {}}};
    return parse_config("k8s:\n" + k8s, "run.yaml", catalog);
}

std::string error_of(const std::string& k8s) {
    try {
        parse(k8s);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

TEST(K8sQuantity, FollowsTheApimachineryGrammar) {
    using k8s::parse_quantity;
    EXPECT_EQ(parse_quantity("8")->value, 8);
    EXPECT_TRUE(parse_quantity("8")->integer);
    auto value = [](const char* q) { return static_cast<double>(k8s::parse_quantity(q)->value); };
    EXPECT_DOUBLE_EQ(value("100m"), 0.1);
    EXPECT_FALSE(parse_quantity("100m")->integer);
    EXPECT_TRUE(parse_quantity("1000m")->integer);
    EXPECT_DOUBLE_EQ(value("64Gi"), 64.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(value("1e3"), 1000);
    EXPECT_DOUBLE_EQ(value("1.5k"), 1500);
    EXPECT_TRUE(parse_quantity("1.0")->integer);
    EXPECT_FALSE(parse_quantity("0.5")->integer);
    EXPECT_TRUE(parse_quantity("-1")->negative);
    EXPECT_DOUBLE_EQ(value(".5"), 0.5);
    for (const char* bad : {"", "Gi", "64 GiB", "1.2.3", "8x", "1e", "--1", "1Kb"}) {
        EXPECT_FALSE(parse_quantity(bad)) << bad;
    }
}

TEST(K8sNames, ExtendedResourcesAndCapabilities) {
    EXPECT_TRUE(k8s::is_extended_resource("nvidia.com/gpu"));
    EXPECT_TRUE(k8s::is_extended_resource("rdma/rdma_shared_device_a"));
    EXPECT_FALSE(k8s::is_extended_resource("cpu"));
    EXPECT_FALSE(k8s::is_extended_resource("kubernetes.io/something"));
    EXPECT_TRUE(k8s::is_container_resource_name("hugepages-2Mi"));
    EXPECT_FALSE(k8s::is_container_resource_name("gpu"));
    EXPECT_TRUE(k8s::is_capability_name("IPC_LOCK"));
    EXPECT_TRUE(k8s::is_capability_name("CAP_SYS_NICE"));
    EXPECT_FALSE(k8s::is_capability_name("IPC_LCOK"));
    EXPECT_FALSE(k8s::is_capability_name("ipc_lock"));
    EXPECT_TRUE(k8s::is_env_var_name("NCCL_IB_HCA"));
    EXPECT_FALSE(k8s::is_env_var_name("1NCCL"));
    EXPECT_TRUE(k8s::is_dns1123_subdomain("nvidia"));
    EXPECT_FALSE(k8s::is_dns1123_subdomain("Nvidia_Runtime"));
}

TEST(K8sPodTemplate, AGpuClusterTemplateIsTakenAsWritten) {
    auto cfg = parse(R"(  image: registry.example/preflight:1
  gpus_per_node: 8
  pod_template:
    metadata:
      labels: {team: ml}
      annotations: {example.com/owner: infra}
    spec:
      runtimeClassName: nvidia
      hostNetwork: true
      nodeSelector: {nvidia.com/gpu.product: H100}
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
        - {operator: Exists}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: rack, operator: In, values: [a, b]}]
      containers:
        - name: agent
          resources:
            limits: {nvidia.com/gpu: 8, rdma/rdma_shared_device_a: 1, memory: 64Gi}
            requests: {nvidia.com/gpu: 8, cpu: 500m}
          securityContext:
            capabilities: {add: [IPC_LOCK, SYS_NICE]}
          env:
            - {name: NCCL_IB_GID_INDEX, value: 3}
            - name: NCCL_IB_HCA
              valueFrom: {configMapKeyRef: {name: nccl, key: hca}}
          volumeMounts:
            - {name: dshm, mountPath: /dev/shm}
      volumes:
        - {name: dshm, emptyDir: {medium: Memory}}
)");
    EXPECT_EQ(cfg.k8s.gpus_per_node, 8);
    const json& t = cfg.k8s.pod_template;
    EXPECT_EQ(t["metadata"]["labels"]["team"], "ml");
    EXPECT_EQ(t["spec"]["runtimeClassName"], "nvidia");
    EXPECT_EQ(t["spec"]["tolerations"][0]["tolerationSeconds"], 60);
    const json& agent = t["spec"]["containers"][0];
    EXPECT_EQ(agent["resources"]["limits"]["nvidia.com/gpu"], 8);
    EXPECT_EQ(agent["resources"]["requests"]["cpu"], "500m");
    EXPECT_EQ(agent["env"][0]["value"], "3") << "env values are strings in the API";
    EXPECT_EQ(agent["securityContext"]["capabilities"]["add"], json({"IPC_LOCK", "SYS_NICE"}));
    EXPECT_EQ(t["spec"]["volumes"][0]["emptyDir"]["medium"], "Memory");
    EXPECT_EQ(parse("  image: x\n").k8s.pod_template, json::object());
}

TEST(K8sPodTemplate, RefusalsNameTheFieldAndTheLine) {
    struct Case {
        std::string yaml;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {"  gpus_per_node: -1\n", "run.yaml:2:18: 'k8s.gpus_per_node' must be in 0..64"},
        {"  pod_template:\n    spec:\n      restartPolicy: Always\n",
         "run.yaml:4:7: 'k8s.pod_template.spec.restartPolicy' is preflight's"},
        {"  pod_template:\n    spec:\n      serviceAccountName: x\n",
         "'k8s.pod_template.spec.serviceAccountName' is set from k8s.service_account"},
        {"  pod_template:\n    spec:\n      nodename: x\n", "unknown key 'nodename'"},
        {"  pod_template:\n    spec:\n      containers:\n        - {name: agent, command: [sh]}\n",
         "run.yaml:5:25: 'k8s.pod_template.spec.containers[0].command' is preflight's agent "
         "command"},
        {"  pod_template:\n    spec:\n      containers:\n        - {name: agent, image: x}\n",
         "'k8s.pod_template.spec.containers[0].image' is set from k8s.image"},
        {"  pod_template:\n    spec:\n      containers:\n        - {name: sidecar}\n",
         "'k8s.pod_template.spec.containers[0].name' must be 'agent'"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          env: "
         "[{name: PREFLIGHT_RUN_SECRET, value: x}]\n",
         "run.yaml:6:24: 'k8s.pod_template.spec.containers[0].env[0].name' 'PREFLIGHT_RUN_SECRET' "
         "is set by preflight"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          env: "
         "[{name: 1BAD, value: x}]\n",
         "is not a valid environment variable name"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "resources: {limits: {nvidia.com/gpu: 8}, requests: {nvidia.com/gpu: 4}}\n",
         "'k8s.pod_template.spec.containers[0].resources.requests.nvidia.com/gpu' must be equal "
         "to the nvidia.com/gpu limit"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "resources: {requests: {rdma/hca: 1}}\n",
         "is an extended resource: set it in limits"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "resources: {limits: {rdma/hca: 500m}}\n",
         "'500m' must be an integer"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "resources: {limits: {memory: 64 GiB}}\n",
         "'64 GiB' is not a quantity"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "resources: {limits: {gpu: 8}}\n",
         "is not a container resource"},
        {"  pod_template:\n    spec:\n      tolerations: [{key: a, operator: Exists, value: b}]\n",
         "'k8s.pod_template.spec.tolerations[0].value' must be empty when 'operator' is Exists"},
        {"  pod_template:\n    spec:\n      tolerations: [{key: a, operator: In}]\n",
         "must be Exists or Equal, not 'In'"},
        {"  pod_template:\n    spec:\n      tolerations: [{key: a, effect: NoRun}]\n",
         "must be NoSchedule, PreferNoSchedule or NoExecute"},
        {"  pod_template:\n    spec:\n      tolerations: [{value: a}]\n",
         "with no 'key' needs operator Exists"},
        {"  pod_template:\n    spec:\n      tolerations: [{key: preflight.dev/degraded, "
         "operator: Exists}]\n",
         "is tolerated by preflight itself"},
        {"  pod_template:\n    spec:\n      runtimeClassName: Nvidia_Runtime\n",
         "'Nvidia_Runtime' is not a DNS-1123 subdomain"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "securityContext: {capabilities: {add: [IPC_LCOK]}}\n",
         "'IPC_LCOK' is not a Linux capability"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "securityContext: {privileged: true, allowPrivilegeEscalation: false}\n",
         "cannot set allowPrivilegeEscalation to false and privileged to true"},
        {"  pod_template:\n    spec:\n      containers:\n        - name: agent\n          "
         "volumeMounts: [{name: nope, mountPath: /x}]\n",
         "names no volume: 'nope'"},
        {"  pod_template:\n    spec:\n      volumes: [{name: tls-ca, emptyDir: {}}]\n",
         "'tls-ca' is preflight's"},
        {"  pod_template:\n    spec:\n      volumes: [{name: dshm}]\n",
         "needs exactly one volume source"},
        {"  pod_template:\n    metadata:\n      labels: {preflight.dev/run: x}\n",
         "'k8s.pod_template.metadata.labels.preflight.dev/run' is set by preflight"},
        {"  pod_template:\n    spec:\n      affinity:\n        podAntiAffinity:\n          "
         "requiredDuringSchedulingIgnoredDuringExecution: []\n",
         "cannot replace preflight's one-pod-per-node anti-affinity"},
        {"  pod_template:\n    spec:\n      nodeSelector: {gpu: \"yes please\"}\n",
         "is not a valid label value"},
    };
    for (const auto& c : cases) {
        const std::string err = error_of(c.yaml);
        EXPECT_NE(err.find(c.expected), std::string::npos) << c.yaml << "\n  -> " << err;
        EXPECT_EQ(err.rfind("run.yaml:", 0), 0u) << err;
    }
}

}  // namespace
}  // namespace preflight::core
