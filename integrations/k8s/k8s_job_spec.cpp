// The agent Job and its token Secret as objects, and the input they are built from.
#include "integrations/k8s/k8s_job_spec.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/config_error.hpp"
#include "integrations/k8s/node_sink.hpp"
#include "integrations/k8s/pod_template_merge.hpp"

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
    json command = {"preflight-agent", "session", "--controller",
                    in.controller,     "--node",  "$(NODE_NAME)"};
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
             {{"nodeSelectorTerms", node_pinning_terms(in.nodes)}}}}},
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
        // A template the merge refuses fails here, before anything starts; so does a Job too big
        // to be stored (each term of the node pinning is repeated for each template term).
        const std::size_t bytes = agent_job(in).dump().size();
        if (bytes > k_max_job_bytes) {
            return core::Error{
                "the agent Job for " + std::to_string(in.nodes.size()) + " nodes would be " +
                std::to_string(bytes) + " bytes, over the " + std::to_string(k_max_job_bytes) +
                " bytes an API server can store with each of its pods (one node-affinity term "
                "per node and per required term of k8s.pod_template): run fewer nodes at once "
                "or give the template fewer nodeSelectorTerms"};
        }
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

}  // namespace preflight::controller::k8s
