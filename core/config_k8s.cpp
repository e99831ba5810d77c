// The `k8s` table: Kubernetes API access, the agent Job of `--launcher k8s` and its pod template
// (core/k8s_pod_template.hpp). Owned by the Kubernetes wing.
#include "core/config_sections.hpp"
#include "core/k8s_pod_template.hpp"

namespace preflight::core::config {

namespace {

void read_pod_template(const ReadContext& ctx, const YAML::Node& node, const FieldSpec&,
                       const std::string&, KubernetesConfig& out) {
    out.pod_template = k8s::parse_pod_template(ctx.file, node);
}

}  // namespace

Section k8s_section() {
    using K = KubernetesConfig;
    return section<K>(
        "k8s", "k8s",
        "Kubernetes API access: the action sink (taints), `--launcher k8s` (an agent Job) and "
        "`certify --k8s`.",
        &RunConfig::k8s,
        {
            field("kubeconfig", &K::kubeconfig,
                  "the kubeconfig file; empty: $KUBECONFIG, else in-cluster, else ~/.kube/config"),
            field("context", &K::context, "the kubeconfig context; empty: its current-context"),
            field("namespace", &K::namespace_name, "where the agent Job and its Secret are created",
                  "", not_empty()),
            field("image", &K::image, "the agent image for `--launcher k8s`"),
            field("service_account", &K::service_account, "the agent pods' ServiceAccount", "",
                  not_empty()),
            field("request_timeout_s", &K::request_timeout_s, "one API request", "s",
                  duration(false)),
            field("max_retries", &K::max_retries,
                  "retries of a request on 429, 5xx and transport errors, with backoff", "",
                  whole_in(0, 10)),
            field("gpus_per_node", &K::gpus_per_node,
                  "GPUs each agent pod asks for (limits nvidia.com/gpu) when the run has GPU "
                  "checks",
                  "", whole_in(0, 64, "0: read the nodes' allocatable nvidia.com/gpu at launch")),
            custom_field("pod_template", &K::pod_template,
                         "merged into the agent pods: GPU and RDMA resources, tolerations, node "
                         "selection, runtime class, host network, capabilities, /dev/shm, "
                         "environment",
                         "", "a PodTemplateSpec subset (docs/kubernetes.md)", &read_pod_template),
        });
}

}  // namespace preflight::core::config
