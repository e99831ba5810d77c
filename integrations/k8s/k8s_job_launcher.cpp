// The Indexed Job launcher: builds the Job, creates it with its token Secret, watches its pods for
// start failures, and deletes both at the end (also when the controller is unwinding).
#include "integrations/k8s/k8s_job_launcher.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "core/json_yaml.hpp"
#include "core/k8s_pod_template.hpp"
#include "integrations/k8s/k8s_gpu_count.hpp"
#include "integrations/k8s/k8s_job_status.hpp"
#include "integrations/k8s/pod_template_merge.hpp"

namespace preflight::controller::k8s {

namespace {

using nlohmann::json;

}  // namespace

K8sJobLauncher::~K8sJobLauncher() {
    stop();
}

std::map<std::string, std::string> K8sJobLauncher::start(const std::vector<core::Node>& nodes,
                                                         const LaunchContext& ctx) {
    std::map<std::string, std::string> failed;
    auto fail_all = [&](const std::string& why) {
        for (const auto& n : nodes) {
            failed[n.name] = why;
        }
        return failed;
    };
    if (nodes.empty()) {
        return failed;
    }
    if (ctx.k8s.image.empty()) {
        return fail_all("k8s launcher: k8s.image (the preflight-agent image) is not set");
    }
    if (!m_client) {
        auto cluster = outcome::k8s::load_cluster_config(ctx.k8s.kubeconfig, ctx.k8s.context);
        if (!cluster) {
            return fail_all("k8s launcher: " + cluster.error().message);
        }
        m_client = std::make_shared<outcome::k8s::Client>(
            *cluster, outcome::k8s::client_options_from(ctx.k8s));
    }
    m_namespace = ctx.k8s.namespace_name;
    auto input = job_input(nodes, ctx);
    if (!input) {
        return fail_all("k8s launcher: " + input.error().message);
    }
    JobSpecInput& in = input.value();
    if (needs_gpu_count(ctx)) {
        // One GET of all Nodes (the controller may list nodes) rather than one per node.
        auto list = m_client->get("/api/v1/nodes", outcome::k8s::Access{"list", "nodes", "", ""});
        if (!list) {
            return fail_all(
                "k8s launcher: the run has GPU checks and k8s.gpus_per_node is not set, "
                "but the nodes' allocatable GPUs cannot be read: " +
                list.error().message);
        }
        const GpuCount count = gpus_from_nodes(*list, in.nodes);
        for (const auto& note : count.notes) {
            spdlog::warn("k8s launcher: nvidia.com/gpu: {}", note);
        }
        if (count.gpus == 0) {
            spdlog::warn(
                "k8s launcher: no node of the run has allocatable nvidia.com/gpu; agent "
                "pods ask for no GPUs (GPU checks will find none)");
        } else {
            spdlog::info(
                "k8s launcher: each agent pod asks for {} nvidia.com/gpu (the minimum "
                "allocatable over the run's nodes)",
                count.gpus);
        }
        in.gpus_per_node = count.gpus;
    }
    for (const auto& n : nodes) {
        m_nodes.insert(n.name);
    }
    m_job = in.name;
    const std::string ns = outcome::k8s::url_escape(m_namespace);
    auto secret =
        m_client->post("/api/v1/namespaces/" + ns + "/secrets", token_secret(in, ctx.secret),
                       outcome::k8s::Access{"create", "secrets", "", m_namespace});
    if (!secret) {
        return fail_all("k8s launcher: " + secret.error().message);
    }
    m_created_secret = true;
    auto job = m_client->post("/apis/batch/v1/namespaces/" + ns + "/jobs", agent_job(in),
                              outcome::k8s::Access{"create", "jobs", "batch", m_namespace});
    if (!job) {
        return fail_all("k8s launcher: " + job.error().message);
    }
    m_created_job = true;
    m_job_uid = job->value("metadata", json::object()).value("uid", std::string());
    spdlog::info("k8s launcher: created Indexed Job {}/{} ({} pods, image {})", m_namespace, m_job,
                 nodes.size(), in.image);
    return failed;
}

std::map<std::string, std::string> K8sJobLauncher::exited() {
    if (!m_created_job) {
        return m_failed;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last_poll < std::chrono::seconds(1)) {
        return m_failed;  // the hub polls often; the API server is asked once a second
    }
    m_last_poll = now;
    auto pods = m_client->get(
        "/api/v1/namespaces/" + outcome::k8s::url_escape(m_namespace) + "/pods?labelSelector=" +
            outcome::k8s::url_escape(std::string(core::k8s::k_run_label) + "=" + m_job),
        outcome::k8s::Access{"list", "pods", "", m_namespace});
    if (!pods) {
        spdlog::warn("k8s launcher: {}", pods.error().message);
        return m_failed;
    }
    try {
        warn_failed_create(pods->value("items", json::array()).size());
        for (const auto& pod : pods->value("items", json::array())) {
            const std::string node =
                pod.value("spec", json::object()).value("nodeName", std::string());
            if (node.empty() || m_nodes.count(node) == 0 || m_failed.count(node) != 0) {
                continue;
            }
            if (auto why = pod_start_failure(pod); !why.empty()) {
                spdlog::warn("k8s launcher: node {}: {}", node, why);
                m_failed[node] = why;
            }
        }
    } catch (const json::exception& e) {
        spdlog::warn("k8s launcher: unreadable pod list: {}", e.what());
    }
    return m_failed;
}

void K8sJobLauncher::warn_failed_create(std::size_t pods_seen) {
    const auto now = std::chrono::steady_clock::now();
    if (m_warned_failed_create || pods_seen >= m_nodes.size() ||
        now - m_last_event_poll < std::chrono::seconds(5)) {
        return;
    }
    m_last_event_poll = now;
    auto events = m_client->get("/api/v1/namespaces/" + outcome::k8s::url_escape(m_namespace) +
                                    "/events?" + job_events_query(m_job, m_job_uid),
                                outcome::k8s::Access{"list", "events", "", m_namespace});
    if (!events) {
        return;  // the reason is asked for again at the deadline, and said there
    }
    if (auto why = failed_create_message(*events); !why.empty()) {
        spdlog::warn(
            "k8s launcher: the Job controller cannot create agent pods ({} of {} exist): {}",
            pods_seen, m_nodes.size(), why);
        m_warned_failed_create = true;
    }
}

std::map<std::string, std::string> K8sJobLauncher::not_started() {
    std::map<std::string, std::string> out;
    if (!m_created_job) {
        return out;
    }
    const std::string ns = outcome::k8s::url_escape(m_namespace);
    auto pods = m_client->get(
        "/api/v1/namespaces/" + ns + "/pods?labelSelector=" +
            outcome::k8s::url_escape(std::string(core::k8s::k_run_label) + "=" + m_job),
        outcome::k8s::Access{"list", "pods", "", m_namespace});
    auto events =
        m_client->get("/api/v1/namespaces/" + ns + "/events?" + job_events_query(m_job, m_job_uid),
                      outcome::k8s::Access{"list", "events", "", m_namespace});
    auto job = m_client->get(
        "/apis/batch/v1/namespaces/" + ns + "/jobs/" + outcome::k8s::url_escape(m_job),
        outcome::k8s::Access{"get", "jobs", "batch", m_namespace});
    if (!pods) {
        spdlog::warn("k8s launcher: {}", pods.error().message);
        return out;
    }
    std::string why = pods_not_running_reason(
        job ? *job : json::object(), events ? *events : json::object(), *pods, m_nodes.size());
    if (!events) {
        why += std::string(why.empty() ? "" : "; ") + "its Events cannot be read (" +
               events.error().message + ")";
    }
    if (why.empty()) {
        return out;
    }
    std::set<std::string> placed;
    try {
        for (const auto& pod : pods->value("items", json::array())) {
            placed.insert(pod.value("spec", json::object()).value("nodeName", std::string()));
        }
    } catch (const json::exception& e) {
        spdlog::warn("k8s launcher: unreadable pod list: {}", e.what());
        return out;  // which nodes have a pod is unknown: say nothing rather than guess
    }
    for (const auto& node : m_nodes) {
        if (placed.count(node) == 0 && m_failed.count(node) == 0) {
            out[node] = "no agent pod ran there: " + why;
        }
    }
    return out;
}

std::string K8sJobLauncher::describe(const std::vector<core::Node>& nodes,
                                     const LaunchContext& ctx) const {
    if (nodes.empty()) {
        return "# k8s launcher: no nodes\n";
    }
    auto input = job_input(nodes, ctx);
    if (!input) {
        return "# k8s launcher: " + input.error().message + "\n";
    }
    json secret = token_secret(input.value(), "<generated per run>");
    if (secret["stringData"].contains("ca.crt")) {
        secret["stringData"]["ca.crt"] = "<" + ctx.tls_ca + ">";
    }
    std::string gpus;
    if (needs_gpu_count(ctx)) {
        // No API access in a dry run: say where the count will come from instead of guessing.
        gpus =
            "# nvidia.com/gpu: the run has GPU checks; at launch each agent pod asks for the "
            "minimum status.allocatable[\"nvidia.com/gpu\"] of the run's nodes (not read in a "
            "dry run: set k8s.gpus_per_node to fix it and see it below)\n";
    } else if (input->gpus_per_node > 0) {
        gpus = "# nvidia.com/gpu: " + std::to_string(input->gpus_per_node) +
               " per agent pod (k8s.gpus_per_node), with a memory-backed /dev/shm\n";
    }
    return "# k8s launcher: this Secret and Indexed Job, created in namespace " +
           ctx.k8s.namespace_name + " (image " +
           (ctx.k8s.image.empty() ? std::string("<k8s.image is not set>") : ctx.k8s.image) + ")\n" +
           gpus + (ctx.k8s.pod_template.empty() ? "" : "# k8s.pod_template merged in\n") + "---\n" +
           core::to_yaml(secret) + "---\n" + core::to_yaml(agent_job(input.value()));
}

void K8sJobLauncher::stop() {
    if (!m_client) {
        return;
    }
    const std::string ns = outcome::k8s::url_escape(m_namespace);
    if (m_created_job) {
        auto r = m_client->del(
            "/apis/batch/v1/namespaces/" + ns + "/jobs/" + outcome::k8s::url_escape(m_job),
            outcome::k8s::Access{"delete", "jobs", "batch", m_namespace});
        if (!r) {
            spdlog::warn("k8s launcher: Job {}/{} left behind: {}", m_namespace, m_job,
                         r.error().message);
        }
        m_created_job = false;
    }
    if (m_created_secret) {
        auto r = m_client->del(
            "/api/v1/namespaces/" + ns + "/secrets/" + outcome::k8s::url_escape(m_job),
            outcome::k8s::Access{"delete", "secrets", "", m_namespace});
        if (!r) {
            spdlog::warn("k8s launcher: Secret {}/{} left behind: {}", m_namespace, m_job,
                         r.error().message);
        }
        m_created_secret = false;
    }
}

LauncherEntry k8s_launcher_entry() {
    return {"k8s", "an Indexed Job, one agent pod per node (the k8s section)",
            [] { return std::make_unique<K8sJobLauncher>(); }};
}

}  // namespace preflight::controller::k8s
