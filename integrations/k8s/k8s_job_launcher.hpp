// `--launcher k8s`: one Indexed Job with one agent pod per node. Pods are confined to the run's
// nodes (required node affinity, one term per node on metadata.name) and spread one per node
// (required pod anti-affinity on kubernetes.io/hostname among the run's pods); each agent learns
// its node from spec.nodeName and the run secret from a per-run Secret (each pod derives its own
// node key from it). Pods that cannot start (ImagePullBackOff, CrashLoopBackOff, ...) make their
// node `error` at once; pods never created (FailedCreate) or never scheduled are named in the
// `error` of the nodes left without a pod at the connect deadline; the Job and Secret are deleted
// afterwards.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/launch/launcher.hpp"
#include "integrations/k8s/client.hpp"
#include "integrations/k8s/k8s_job_spec.hpp"
#include "integrations/k8s/k8s_job_status.hpp"

namespace preflight::controller::k8s {

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
    std::map<std::string, std::string> not_started() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    const std::string& job_name() const { return m_job; }

  private:
    // Warns once, as soon as it is seen, that the Job controller cannot create agent pods.
    void warn_failed_create(std::size_t pods_seen);

    std::shared_ptr<outcome::k8s::Client> m_client;
    std::string m_namespace;
    std::string m_job;
    std::string m_job_uid;
    std::set<std::string> m_nodes;
    std::map<std::string, std::string> m_failed;
    std::chrono::steady_clock::time_point m_last_poll{};
    std::chrono::steady_clock::time_point m_last_event_poll{};
    bool m_warned_failed_create = false;
    bool m_created_secret = false;
    bool m_created_job = false;
};

// `--launcher k8s` for a run's LauncherTable.
LauncherEntry k8s_launcher_entry();

}  // namespace preflight::controller::k8s
