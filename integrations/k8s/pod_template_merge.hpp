// How `k8s.pod_template` (core/k8s_pod_template.hpp, checked at config load) and the GPU defaults
// are merged into the agent Job's pod template. The rules, in order:
//
//  * metadata.labels / .annotations are added; preflight's labels (app.kubernetes.io/name,
//    preflight.dev/run) cannot be set.
//  * Pod fields preflight does not set are taken from the template: runtimeClassName,
//    priorityClassName, schedulerName, hostIPC, hostPID, securityContext, imagePullSecrets,
//    resourceClaims, initContainers (appended; none may be called "agent").
//  * Pod fields preflight sets and the template may replace: hostNetwork (true), dnsPolicy
//    (ClusterFirstWithHostNet; ClusterFirst when the template turns hostNetwork off and names no
//    dnsPolicy), terminationGracePeriodSeconds (5).
//  * nodeSelector is added; node affinity is ANDed, never replaced: preflight pins pods with one
//    required term per node (node_pinning_terms) and each of them is combined with each of the
//    template's nodeSelectorTerms (terms are ORed, the requirements of one term ANDed), so a pod
//    may land on a run's node that matches one of the template's terms and nowhere else;
//    preferred terms and podAffinity come from the template; podAntiAffinity's required terms
//    are appended to preflight's one-pod-per-node term.
//  * tolerations: preflight's (its own taints, and nvidia.com/gpu:NoSchedule Exists), then the
//    template's appended; one with the same key and effect as an earlier one replaces it (so the
//    nvidia.com/gpu default can be narrowed), except preflight's own taint keys (an error).
//  * volumes by name (later wins: "sys" and "dshm" may be replaced; "tls-ca" may not).
//  * the container named "agent" (the only one a template may name): resources.limits and
//    .requests merged per resource (template wins); env by name (later wins; NODE_NAME and
//    PREFLIGHT_RUN_SECRET may not be set); envFrom, imagePullPolicy, workingDir from the template;
//    volumeMounts by mountPath (later wins; /etc/preflight/tls may not be used); securityContext
//    per key with capabilities.add/.drop united — and when the result is privileged or adds
//    CAP_SYS_ADMIN, preflight's allowPrivilegeEscalation: false is dropped unless the template set
//    it (the API server refuses that combination). command, args and image may not be set.
//  * GPU defaults, only when the run has GPU checks and the agent container asks for no
//    nvidia.com/gpu after the merge: limits nvidia.com/gpu = the GPUs per node (an extended
//    resource: the request defaults to the limit) and a memory-backed emptyDir "dshm" at /dev/shm
//    (NCCL's shared memory; a container's default 64 MiB is too small).
// Anything else in a template is an error naming the field.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace preflight::controller::k8s {

// The required nodeSelectorTerms that pin a pod to one of nodes: one term per node, each
// `matchFields: [{key: metadata.name, operator: In, values: [that node]}]`. kube-apiserver refuses
// more than one value in a node field selector (ValidateNodeFieldSelectorRequirement: "must be
// only one value when `operator` is 'In' or 'NotIn' for node field selector"), and a term per node
// is also what the scheduler's NodeAffinity PreFilter turns into its list of candidate nodes. The
// node name, not the kubernetes.io/hostname label: the kubelet sets that label to the host's
// name, which need not be the Node's name (--hostname-override, some clouds).
nlohmann::json node_pinning_terms(const std::vector<std::string>& nodes);

// Merges tmpl into pod (the Job's spec.template: {metadata, spec}) by the rules above.
core::Status merge_pod_template(nlohmann::json& pod, const nlohmann::json& tmpl);

// True when the template's agent container names nvidia.com/gpu in its limits or requests.
bool template_sets_gpus(const nlohmann::json& tmpl);

// Adds the GPU defaults to pod (spec.template) when its agent container asks for no GPU yet.
void add_gpu_defaults(nlohmann::json& pod, int gpus_per_node);

}  // namespace preflight::controller::k8s
