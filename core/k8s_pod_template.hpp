// `k8s.pod_template` of the run configuration: what a cluster adds to the agent pods of
// `--launcher k8s` (GPU and RDMA resources, tolerations, node selection, runtime class, host
// network, capabilities, /dev/shm, NCCL environment). Parsed and checked here, with file:line
// errors, so that a template the launcher would refuse, or the API server would answer with 422,
// fails at load time; merged into the Job by integrations/k8s/pod_template_merge.hpp, whose header
// states the merge rules. The names below are preflight's own parts of the pod: a template that
// sets them is an error naming the field.
#pragma once

#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace preflight::core::k8s {

inline constexpr std::string_view k_agent_container = "agent";
inline constexpr std::string_view k_node_name_env = "NODE_NAME";
inline constexpr std::string_view k_run_secret_env_name = "PREFLIGHT_RUN_SECRET";
inline constexpr std::string_view k_tls_volume = "tls-ca";
inline constexpr std::string_view k_tls_mount_path = "/etc/preflight/tls";
inline constexpr std::string_view k_run_label = "preflight.dev/run";
inline constexpr std::string_view k_name_label = "app.kubernetes.io/name";
inline constexpr std::string_view k_gpu_resource = "nvidia.com/gpu";
// Tolerations of preflight's own taints (so a node it tainted can be checked again); fixed.
inline constexpr std::string_view k_own_taint_keys[] = {"preflight.dev/degraded",
                                                        "preflight.dev/uncertified"};

// Parses and checks the `pod_template` node (a PodTemplateSpec subset: metadata.labels and
// .annotations; spec fields listed in docs/kubernetes.md). Returns it as JSON (the API's field
// names and types). Throws ConfigError("file:line:col: 'k8s.pod_template.<field>' ...").
nlohmann::json parse_pod_template(const std::string& file, const YAML::Node& node);

}  // namespace preflight::core::k8s
