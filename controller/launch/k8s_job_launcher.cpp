// The Indexed Job launcher: builds the Job, creates it with its token Secret, watches its pods for
// start failures, and deletes both at the end (also when the controller is unwinding).
#include "controller/launch/k8s_job_launcher.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "controller/launch/k8s_pod_template.hpp"
#include "core/config_error.hpp"
#include "core/json_yaml.hpp"
#include "core/k8s_pod_template.hpp"
#include "outcome/k8s/node_sink.hpp"

namespace preflight::controller::k8s {

namespace {

using nlohmann::json;

// The names the pod template's validation guards (core/k8s_pod_template.hpp), as JSON keys.
const std::string k_run_label{core::k8s::k_run_label};
const std::string k_token_key{core::k8s::k_run_secret_env_name};

}  // namespace

std::string job_name_for(const std::string& run_id) {
    std::string out = "preflight-";
    for (char c : run_id) {
        const auto u = static_cast<unsigned char>(c);
        out += std::isalnum(u) != 0 ? static_cast<char>(std::tolower(u)) : '-';
    }
    if (out.size() > 52) {
        out.resize(52);
    }
    while (!out.empty() && out.back() == '-') {
        out.pop_back();
    }
    return out;
}

json token_secret(const JobSpecInput& in, const std::string& token) {
    return {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata",
             {{"name", in.name},
              {"namespace", in.namespace_name},
              {"labels", {{k_run_label, job_name_for(in.run_id)}}}}},
            {"type", "Opaque"},
            {"stringData", in.tls_ca_pem.empty()
                               ? json{{k_token_key, token}}
                               : json{{k_token_key, token}, {"ca.crt", in.tls_ca_pem}}}};
}

json agent_job(const JobSpecInput& in) {
    const auto n = static_cast<int>(in.nodes.size());
    const std::string run = job_name_for(in.run_id);
    json command = {"preflight-agent", "--controller", in.controller, "--node", "$(NODE_NAME)"};
    for (const auto& a : in.agent_args) {
        command.push_back(a);
    }
    json tolerations = json::array();
    for (auto key : {outcome::k8s::k_degraded_key, outcome::k8s::k_uncertified_key}) {
        tolerations.push_back(
            {{"key", std::string(key)}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
    }
    // GPU nodes are commonly tainted nvidia.com/gpu:NoSchedule so that only GPU workloads land
    // there; the agents must too (a template entry with this key and effect replaces it).
    tolerations.push_back({{"key", std::string(core::k8s::k_gpu_resource)},
                           {"operator", "Exists"},
                           {"effect", "NoSchedule"}});
    json pod_spec = {
        {"restartPolicy", "Never"},
        {"serviceAccountName", in.service_account},
        {"automountServiceAccountToken", false},  // agents never talk to the API
        {"hostNetwork", true},                    // measure the node's own links
        {"dnsPolicy", "ClusterFirstWithHostNet"},
        {"terminationGracePeriodSeconds", 5},
        {"tolerations", tolerations},
        {"affinity",
         {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms",
               json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                           {"operator", "In"},
                                                           {"values", in.nodes}}})}}})}}}}},
          {"podAntiAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             json::array({{{"labelSelector", {{"matchLabels", {{k_run_label, run}}}}},
                           {"topologyKey", "kubernetes.io/hostname"}}})}}}}},
        {"containers",
         json::array({{
             {"name", "agent"},
             {"image", in.image},
             {"command", command},
             {"env",
              json::array({
                  {{"name", "NODE_NAME"},
                   {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
                  {{"name", k_token_key},
                   {"valueFrom", {{"secretKeyRef", {{"name", in.name}, {"key", k_token_key}}}}}},
              })},
             {"securityContext",
              {{"readOnlyRootFilesystem", true}, {"allowPrivilegeEscalation", false}}},
             {"volumeMounts",
              json::array({{{"name", "sys"}, {"mountPath", "/sys"}, {"readOnly", true}}})},
         }})},
        {"volumes",
         json::array({{{"name", "sys"}, {"hostPath", {{"path", "/sys"}, {"type", "Directory"}}}}})},
    };
    if (!in.tls_ca_pem.empty()) {
        // Only the CA (public) is mounted; the run secret stays an environment variable.
        pod_spec["containers"][0]["volumeMounts"].push_back(
            {{"name", "tls-ca"}, {"mountPath", std::string(k_tls_ca_mount)}, {"readOnly", true}});
        pod_spec["volumes"].push_back(
            {{"name", "tls-ca"},
             {"secret",
              {{"secretName", in.name},
               {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}});
    }
    json pod = {{"metadata",
                 {{"labels", {{"app.kubernetes.io/name", "preflight-agent"}, {k_run_label, run}}}}},
                {"spec", pod_spec}};
    if (auto st = merge_pod_template(pod, in.pod_template); !st) {
        throw core::ConfigError(st.error().message);
    }
    add_gpu_defaults(pod, in.gpus_per_node);
    return {
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata",
         {{"name", in.name},
          {"namespace", in.namespace_name},
          {"labels", {{"app.kubernetes.io/name", "preflight-agent"}, {k_run_label, run}}}}},
        {"spec",
         {{"completionMode", "Indexed"},
          {"completions", n},
          {"parallelism", n},
          // A node whose agent fails is that node's error; never a reason to retry on another.
          {"backoffLimit", n},
          {"activeDeadlineSeconds", 3600},
          {"ttlSecondsAfterFinished", 300},
          {"template", pod}}},
    };
}

namespace {

std::string start_failure_of(const json& pod) {
    const json status = pod.value("status", json::object());
    const std::string name = pod.value("metadata", json::object()).value("name", std::string("?"));
    static const char* k_fatal[] = {"ImagePullBackOff",           "ErrImagePull",
                                    "InvalidImageName",           "ErrImageNeverPull",
                                    "CreateContainerConfigError", "CreateContainerError",
                                    "CrashLoopBackOff",           "RunContainerError"};
    for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
        for (const auto& cs : status.value(list, json::array())) {
            const json waiting = cs.value("state", json::object()).value("waiting", json::object());
            const std::string reason = waiting.value("reason", std::string());
            if (std::find(std::begin(k_fatal), std::end(k_fatal), reason) != std::end(k_fatal)) {
                std::string msg = waiting.value("message", std::string());
                return "pod " + name + " cannot start: " + reason + (msg.empty() ? "" : ": " + msg);
            }
            const json term = cs.value("state", json::object()).value("terminated", json::object());
            if (!term.empty() && term.value("exitCode", 0) != 0) {
                return "pod " + name + ": agent exited with status " +
                       std::to_string(term.value("exitCode", 0)) + " (" +
                       term.value("reason", std::string("Error")) + ")";
            }
        }
    }
    if (status.value("phase", std::string()) == "Failed") {
        return "pod " + name + " failed: " + status.value("reason", std::string("Failed")) +
               (status.contains("message") ? ": " + status.value("message", std::string()) : "");
    }
    return {};
}

}  // namespace

std::string pod_start_failure(const json& pod) {
    try {
        return start_failure_of(pod);
    } catch (const json::exception& e) {
        // A pod whose status has other types than the API's (found by fuzz/k8s_response_fuzz):
        // nothing can be concluded from it; the connect deadline still applies to its node.
        spdlog::debug("k8s launcher: unreadable pod status: {}", e.what());
        return {};
    }
}

bool needs_gpu_count(const LaunchContext& ctx) {
    return ctx.gpu_checks && ctx.k8s.gpus_per_node == 0 &&
           !template_sets_gpus(ctx.k8s.pod_template);
}

core::Result<JobSpecInput> job_input(const std::vector<core::Node>& nodes,
                                     const LaunchContext& ctx) {
    JobSpecInput in;
    in.name = job_name_for(ctx.run_id);
    in.namespace_name = ctx.k8s.namespace_name;
    in.run_id = ctx.run_id;
    in.image = ctx.k8s.image;
    in.service_account = ctx.k8s.service_account;
    in.agent_args = ctx.agent_args;
    if (!ctx.tls_ca.empty()) {
        std::ifstream ca(ctx.tls_ca);
        std::stringstream pem;
        pem << ca.rdbuf();
        if (!ca || pem.str().empty()) {
            return core::Error{"cannot read controller.tls.ca '" + ctx.tls_ca + "'"};
        }
        in.tls_ca_pem = pem.str();
        append_tls_args(in.agent_args, ctx, std::string(k_tls_ca_mount) + "/ca.crt");
    }
    for (const auto& n : nodes) {
        in.nodes.push_back(n.name);
    }
    in.pod_template = ctx.k8s.pod_template;
    if (ctx.gpu_checks && !template_sets_gpus(in.pod_template)) {
        in.gpus_per_node = ctx.k8s.gpus_per_node;  // 0: start() reads the nodes' allocatable
    }
    try {
        (void)agent_job(in);  // a template the merge refuses fails here, before anything starts
    } catch (const std::exception& e) {
        return core::Error{e.what()};
    }
    // One template for all pods: they all dial one address (--advertise, usually the controller
    // pod's IP or a Service).
    in.controller = ctx.dial_address.at(nodes.front().name);
    for (const auto& n : nodes) {
        if (ctx.dial_address.at(n.name) != in.controller) {
            spdlog::warn(
                "k8s launcher: nodes route to the controller differently; all agents dial "
                "{} (set --advertise)",
                in.controller);
            break;
        }
    }
    if (in.controller.rfind("127.", 0) == 0) {
        spdlog::warn(
            "k8s launcher: agents will dial {}, which is each node's own loopback; "
            "pass --advertise with an address the nodes can reach",
            in.controller);
    }
    return in;
}

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
    auto pods = m_client->get("/api/v1/namespaces/" + outcome::k8s::url_escape(m_namespace) +
                                  "/pods?labelSelector=" +
                                  outcome::k8s::url_escape(std::string(k_run_label) + "=" + m_job),
                              outcome::k8s::Access{"list", "pods", "", m_namespace});
    if (!pods) {
        spdlog::warn("k8s launcher: {}", pods.error().message);
        return m_failed;
    }
    try {
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

}  // namespace preflight::controller::k8s
