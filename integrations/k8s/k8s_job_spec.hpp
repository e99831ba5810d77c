// The agent Job of `--launcher k8s` and its token Secret, as objects (pure; tested directly):
// preflight's pod, the GPU defaults and k8s.pod_template merged by the rules of
// k8s_pod_template.hpp, and the run's nodes pinned one node-affinity term per node.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/launch/launcher.hpp"
#include "core/k8s_pod_template.hpp"
#include "core/result.hpp"

namespace preflight::controller::k8s {

struct JobSpecInput {
    std::string name;  // Job and Secret name
    std::string namespace_name;
    std::string run_id;
    std::vector<std::string> nodes;
    std::string image;
    std::string service_account;
    std::string controller;  // HOST:PORT the agents dial
    std::vector<std::string> agent_args;
    std::string tls_ca_pem;  // TLS on: the CA agents verify the controller with (in the Secret)
    nlohmann::json pod_template = nlohmann::json::object();  // k8s.pod_template (merged)
    // GPUs each pod asks for (limits nvidia.com/gpu, plus /dev/shm) unless the template names
    // them; 0: none. The launcher resolves k8s.gpus_per_node 0 from the nodes' allocatable.
    int gpus_per_node = 0;
};

// The largest agent Job (JSON) job_input() accepts. Each of its pods carries the same template,
// and the server adds to both: etcd refuses a stored object over 1.5 MiB (its default
// --max-request-bytes) and kube-apiserver a request body over 3 MiB (MaxRequestBodyBytes).
inline constexpr std::size_t k_max_job_bytes = 1024 * 1024;

// Where agent pods find the TLS CA (the run's Secret, key ca.crt, mounted read-only).
inline constexpr std::string_view k_tls_ca_mount = core::k8s::k_tls_mount_path;

// The Job object (pure; tested directly): preflight's pod, the GPU defaults and the pod template
// merged by the rules of k8s_pod_template.hpp. Throws core::ConfigError for a template the merge
// refuses (job_input() checks it first, so start() and describe() report it as an Error).
// Its size grows with nodes × the template's required node-affinity terms (about 80 bytes each);
// job_input() refuses a Job over k_max_job_bytes.
// Secret holds PREFLIGHT_RUN_SECRET (and ca.crt with TLS).
nlohmann::json agent_job(const JobSpecInput& in);
nlohmann::json token_secret(const JobSpecInput& in, const std::string& token);

// The Job's input for nodes from the launch context (reads the TLS CA file; gpus_per_node from
// k8s.gpus_per_node when the run has GPU checks and the template names no GPUs); an error names
// what is missing or what the pod template may not set.
core::Result<JobSpecInput> job_input(const std::vector<core::Node>& nodes,
                                     const LaunchContext& ctx);

// A DNS-1123 name for a run's Job: "preflight-" + the run id lower-cased, at most 52 characters
// (Indexed Job pod names append "-<index>-<random>").
std::string job_name_for(const std::string& run_id);

// Whether the Job for this context asks for GPUs but does not know how many yet (k8s.gpus_per_node
// 0, no nvidia.com/gpu in the template): start() then reads the nodes' allocatable GPUs.
bool needs_gpu_count(const LaunchContext& ctx);

}  // namespace preflight::controller::k8s
