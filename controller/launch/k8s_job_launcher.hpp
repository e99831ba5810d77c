// `--launcher k8s`: one Indexed Job with one agent pod per node. Pods are confined to the run's
// nodes (required node affinity on metadata.name) and spread one per node (required pod
// anti-affinity on kubernetes.io/hostname among the run's pods); each agent learns its node from
// spec.nodeName and the run secret from a per-run Secret (each pod derives its own node key from
// it). Pods that cannot start (ImagePullBackOff, CrashLoopBackOff, ...) make their node `error` at
// once; the Job and Secret are deleted afterwards.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/launch/launcher.hpp"
#include "core/k8s_pod_template.hpp"
#include "outcome/k8s/client.hpp"

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

// Where agent pods find the TLS CA (the run's Secret, key ca.crt, mounted read-only).
inline constexpr std::string_view k_tls_ca_mount = core::k8s::k_tls_mount_path;

// The Job object (pure; tested directly): preflight's pod, the GPU defaults and the pod template
// merged by the rules of k8s_pod_template.hpp. Throws core::ConfigError for a template the merge
// refuses (job_input() checks it first, so start() and describe() report it as an Error).
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

// Why a pod cannot run its agent, from its status; empty when it may still start or is running.
std::string pod_start_failure(const nlohmann::json& pod);

class K8sJobLauncher final : public Launcher {
  public:
    K8sJobLauncher() = default;
    // For tests: use this client instead of loading credentials from the context's config.
    explicit K8sJobLauncher(std::shared_ptr<outcome::k8s::Client> client)
        : m_client(std::move(client)) {}
    ~K8sJobLauncher() override;

    std::string name() const override { return "k8s"; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    std::map<std::string, std::string> exited() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    const std::string& job_name() const { return m_job; }

  private:
    std::shared_ptr<outcome::k8s::Client> m_client;
    std::string m_namespace;
    std::string m_job;
    std::set<std::string> m_nodes;
    std::map<std::string, std::string> m_failed;
    std::chrono::steady_clock::time_point m_last_poll{};
    bool m_created_secret = false;
    bool m_created_job = false;
};

}  // namespace preflight::controller::k8s
