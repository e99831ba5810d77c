#include "core/config_sections.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/checked_number.hpp"
#include "core/k8s_pod_template.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {
namespace {

// A duration in seconds: above 0 (at or above with allow_zero) and at most k_max_duration_s, so
// that it converts to milliseconds without overflow wherever it is used.
double duration_s(const std::string& file, const YAML::Node& node, const std::string& key,
                  bool allow_zero) {
    const double value = yaml::as_double(file, node, key);
    if (allow_zero ? value < 0.0 : !(value > 0.0)) {
        yaml::fail_out_of_range(file, node, key, allow_zero ? ">= 0" : "> 0");
    }
    if (auto st = check_duration_s(value, key); !st) {
        yaml::fail_out_of_range(
            file, node, key,
            "at most " + std::to_string(static_cast<long long>(k_max_duration_s)) + " (30 days)");
    }
    return value;
}

}  // namespace

void parse_actions(const std::string& file, const YAML::Node& node, ActionsConfig& out) {
    yaml::reject_unknown_keys(
        file, node, "actions",
        {"targets", "max_action_fraction", "min_actions", "max_actions", "scontrol"});
    if (auto n = yaml::get(file, node, "targets", "actions.targets")) {
        if (!n.IsSequence()) {
            yaml::fail(file, n, "'actions.targets' must be a list");
        }
        out.targets.clear();
        for (const auto& item : n) {
            auto target = yaml::as_string(file, item, "actions.targets");
            if (target != "slurm" && target != "k8s") {
                yaml::fail(file, item,
                           "unknown target '" + target +
                               "' in 'actions.targets' (allowed: "
                               "slurm, k8s)");
            }
            out.targets.push_back(target);
        }
    }
    if (auto n = yaml::get(file, node, "max_action_fraction", "actions.max_action_fraction")) {
        out.max_action_fraction = yaml::as_double(file, n, "actions.max_action_fraction");
        if (out.max_action_fraction < 0.0 || out.max_action_fraction > 1.0) {
            yaml::fail_out_of_range(file, n, "actions.max_action_fraction", "in [0, 1]");
        }
    }
    if (auto n = yaml::get(file, node, "min_actions", "actions.min_actions")) {
        out.min_actions = yaml::as_int(file, n, "actions.min_actions");
        if (out.min_actions < 0) {
            yaml::fail_out_of_range(file, n, "actions.min_actions", ">= 0");
        }
    }
    if (auto n = yaml::get(file, node, "max_actions", "actions.max_actions")) {
        out.max_actions = yaml::as_int(file, n, "actions.max_actions");
        if (out.max_actions < 0) {
            yaml::fail_out_of_range(file, n, "actions.max_actions", ">= 0 (0: no absolute cap)");
        }
    }
    if (auto n = yaml::get(file, node, "scontrol", "actions.scontrol")) {
        out.scontrol = yaml::as_string(file, n, "actions.scontrol");
        if (out.scontrol.empty()) {
            yaml::fail(file, n, "'actions.scontrol' must not be empty");
        }
    }
}

void parse_deadlines(const std::string& file, const YAML::Node& node, DeadlineConfig& out) {
    yaml::reject_unknown_keys(file, node, "deadlines",
                              {"connect_s", "heartbeat_s", "step_slack_s"});
    if (auto n = yaml::get(file, node, "connect_s", "deadlines.connect_s")) {
        out.connect_s = duration_s(file, n, "deadlines.connect_s", false);
    }
    if (auto n = yaml::get(file, node, "heartbeat_s", "deadlines.heartbeat_s")) {
        out.heartbeat_s = duration_s(file, n, "deadlines.heartbeat_s", false);
    }
    if (auto n = yaml::get(file, node, "step_slack_s", "deadlines.step_slack_s")) {
        out.step_slack_s = duration_s(file, n, "deadlines.step_slack_s", true);
    }
}

void parse_controller(const std::string& file, const YAML::Node& node, ControllerConfig& out) {
    yaml::reject_unknown_keys(file, node, "controller", {"listen", "port", "advertise", "tls"});
    if (auto n = yaml::get(file, node, "listen", "controller.listen")) {
        out.listen = yaml::as_string(file, n, "controller.listen");
        // The controller binds this literally; a typo is better caught here than at bind().
        unsigned char buffer[16];
        if (::inet_pton(AF_INET, out.listen.c_str(), buffer) != 1 &&
            ::inet_pton(AF_INET6, out.listen.c_str(), buffer) != 1) {
            yaml::fail(file, n, "'controller.listen' must be an IPv4 or IPv6 address");
        }
    }
    if (auto n = yaml::get(file, node, "port", "controller.port")) {
        out.port = yaml::as_int(file, n, "controller.port");
        if (out.port < 0 || out.port > 65535) {
            yaml::fail_out_of_range(file, n, "controller.port", "in 0..65535");
        }
    }
    if (auto n = yaml::get(file, node, "advertise", "controller.advertise")) {
        // May be a host name the agents resolve; empty means "per-node routed source address".
        out.advertise = yaml::as_string(file, n, "controller.advertise");
    }
    if (auto n = yaml::get(file, node, "tls", "controller.tls")) {
        parse_tls(file, n, out.tls);
    }
}

// cert, key and ca are all required; each must be a readable file on the controller (the CA
// too: the controller checks its own certificate against it before any agent starts).
void parse_tls(const std::string& file, const YAML::Node& node, TlsConfig& out) {
    yaml::reject_unknown_keys(file, node, "controller.tls", {"cert", "key", "ca", "server_name"});
    auto read_path = [&](const char* key, std::string& value) {
        const std::string name = std::string("controller.tls.") + key;
        auto n = yaml::get(file, node, key, name);
        if (!n) {
            yaml::fail(file, node, "'controller.tls' needs '" + std::string(key) + "'");
        }
        value = yaml::as_string(file, n, name);
        if (::access(value.c_str(), R_OK) != 0) {
            yaml::fail(file, n,
                       "'" + name + "': cannot read '" + value + "': " + std::strerror(errno));
        }
    };
    read_path("cert", out.cert);
    read_path("key", out.key);
    read_path("ca", out.ca);
    if (auto n = yaml::get(file, node, "server_name", "controller.tls.server_name")) {
        out.server_name = yaml::as_string(file, n, "controller.tls.server_name");
        if (out.server_name.empty()) {
            yaml::fail(file, n, "'controller.tls.server_name' is empty (omit it instead)");
        }
    }
}

void parse_k8s(const std::string& file, const YAML::Node& node, KubernetesConfig& out) {
    yaml::reject_unknown_keys(
        file, node, "k8s",
        {"kubeconfig", "context", "namespace", "image", "service_account", "request_timeout_s",
         "max_retries", "gpus_per_node", "pod_template"});
    auto text = [&](const char* key, std::string& value, bool may_be_empty) {
        const std::string path = std::string("k8s.") + key;
        if (auto n = yaml::get(file, node, key, path)) {
            value = yaml::as_string(file, n, path);
            if (!may_be_empty && value.empty()) {
                yaml::fail(file, n, "'" + path + "' must not be empty");
            }
        }
    };
    text("kubeconfig", out.kubeconfig, true);
    text("context", out.context, true);
    text("namespace", out.namespace_name, false);
    text("image", out.image, true);
    text("service_account", out.service_account, false);
    if (auto n = yaml::get(file, node, "request_timeout_s", "k8s.request_timeout_s")) {
        out.request_timeout_s = duration_s(file, n, "k8s.request_timeout_s", false);
    }
    if (auto n = yaml::get(file, node, "max_retries", "k8s.max_retries")) {
        out.max_retries = yaml::as_int(file, n, "k8s.max_retries");
        if (out.max_retries < 0 || out.max_retries > 10) {
            yaml::fail_out_of_range(file, n, "k8s.max_retries", "in 0..10");
        }
    }
    if (auto n = yaml::get(file, node, "gpus_per_node", "k8s.gpus_per_node")) {
        out.gpus_per_node = yaml::as_int(file, n, "k8s.gpus_per_node");
        if (out.gpus_per_node < 0 || out.gpus_per_node > 64) {
            yaml::fail_out_of_range(
                file, n, "k8s.gpus_per_node",
                "in 0..64 (0: read the nodes' allocatable nvidia.com/gpu at launch)");
        }
    }
    if (auto n = yaml::get(file, node, "pod_template", "k8s.pod_template")) {
        out.pod_template = k8s::parse_pod_template(file, n);
    }
}

// The training job the report estimates the impact for (controller/job_impact.hpp).
nlohmann::json parse_job(const std::string& file, const YAML::Node& node) {
    yaml::reject_unknown_keys(file, node, "job",
                              {"params", "dtype", "nodes", "gpus_per_node", "compute_ms"});
    nlohmann::json job = nlohmann::json::object();
    auto n = yaml::get(file, node, "params", "job.params");
    if (!n) {
        yaml::fail(file, node, "'job.params' (model parameters, e.g. 7e9) is required");
    }
    job["params"] = yaml::as_double(file, n, "job.params");
    if (job["params"].get<double>() <= 0) {
        yaml::fail_out_of_range(file, n, "job.params", "> 0");
    }
    auto c = yaml::get(file, node, "compute_ms", "job.compute_ms");
    if (!c) {
        yaml::fail(file, node, "'job.compute_ms' (compute time per step) is required");
    }
    job["compute_ms"] = yaml::as_double(file, c, "job.compute_ms");
    if (job["compute_ms"].get<double>() <= 0) {
        yaml::fail_out_of_range(file, c, "job.compute_ms", "> 0");
    }
    // yaml-cpp nodes are references: assigning one to another writes into the document, so
    // each lookup gets its own variable.
    if (auto d = yaml::get(file, node, "dtype", "job.dtype")) {
        std::string dtype = yaml::as_string(file, d, "job.dtype");
        if (dtype != "fp32" && dtype != "bf16" && dtype != "fp16" && dtype != "fp8") {
            yaml::fail(file, d, "'job.dtype' must be one of fp32, bf16, fp16, fp8");
        }
        job["dtype"] = dtype;
    }
    if (auto k = yaml::get(file, node, "nodes", "job.nodes")) {
        job["nodes"] = yaml::as_int(file, k, "job.nodes");
        if (job["nodes"].get<int>() < 0) {
            yaml::fail_out_of_range(file, k, "job.nodes", ">= 0 (0: the nodes in the run)");
        }
    }
    if (auto g = yaml::get(file, node, "gpus_per_node", "job.gpus_per_node")) {
        job["gpus_per_node"] = yaml::as_int(file, g, "job.gpus_per_node");
        if (job["gpus_per_node"].get<int>() < 1) {
            yaml::fail_out_of_range(file, g, "job.gpus_per_node", ">= 1");
        }
    }
    return job;
}

}  // namespace preflight::core::config_sections
