#include "core/config.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "core/yaml_errors.hpp"

namespace preflight::core {

namespace {

std::string known_checks(const ParamCatalog& catalog) {
    std::string out;
    for (const auto& [name, specs] : catalog) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out.empty() ? std::string("none") : out;
}

// Parses one config document; m_file prefixes every message.
class ConfigParser {
  public:
    ConfigParser(std::string file, const ParamCatalog& catalog)
        : m_file(std::move(file)), m_catalog(catalog) {}

    RunConfig parse(const YAML::Node& root) {
        RunConfig config;
        config.source = m_file;
        // An empty document (or one holding only comments) means "all defaults".
        if (root.IsDefined() && !root.IsNull()) {
            yaml::reject_unknown_keys(m_file, root, "",
                                      {"evaluation", "actions", "deadlines", "controller", "checks",
                                       "params", "job", "k8s"});
            // A section written as `evaluation:` with nothing under it is an empty section.
            auto section = [&](const char* key) -> std::optional<YAML::Node> {
                YAML::Node node = root[key];
                if (!node.IsDefined() || node.IsNull()) {
                    return std::nullopt;
                }
                return node;
            };
            if (auto n = section("evaluation")) {
                parse_evaluation(*n, config.evaluation);
            }
            if (auto n = section("actions")) {
                parse_actions(*n, config.actions);
            }
            if (auto n = section("deadlines")) {
                parse_deadlines(*n, config.deadlines);
            }
            if (auto n = section("controller")) {
                parse_controller(*n, config.controller);
            }
            if (auto n = yaml::get(m_file, root, "checks", "checks")) {
                parse_checks(n, config.checks);
            } else {
                check_defaults(config.checks);
            }
            if (auto n = section("params")) {
                parse_params(*n, config.check_params);
            }
            if (auto n = section("job")) {
                config.job = parse_job(*n);
            }
            if (auto n = section("k8s")) {
                parse_k8s(*n, config.k8s);
            }
        } else {
            check_defaults(config.checks);
        }
        return config;
    }

    void check_defaults(const std::vector<std::string>& checks) const {
        for (const auto& check : checks) {
            if (m_catalog.count(check) == 0) {
                throw ConfigError(
                    m_file + ": default check '" + check +
                    "' is not available in this build (known: " + known_checks(m_catalog) +
                    "); list the checks to run under 'checks'");
            }
        }
    }

  private:
    // The check name at node must be in the catalog.
    void require_check(const YAML::Node& node, const std::string& check) const {
        if (m_catalog.count(check) == 0) {
            yaml::fail(m_file, node,
                       "unknown check '" + check + "' (known: " + known_checks(m_catalog) + ")");
        }
    }

    [[noreturn]] void out_of_range(const YAML::Node& node, const std::string& key,
                                   const std::string& range) const {
        yaml::fail(m_file, node, "'" + key + "' must be " + range);
    }

    void parse_evaluation(const YAML::Node& node, EvaluationConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "evaluation",
                                  {"threshold_fraction", "min_cohort", "cohort_label", "floors",
                                   "topology_file", "topology_label"});
        if (auto n =
                yaml::get(m_file, node, "threshold_fraction", "evaluation.threshold_fraction")) {
            out.threshold_fraction = yaml::as_double(m_file, n, "evaluation.threshold_fraction");
            if (!(out.threshold_fraction > 0.0 && out.threshold_fraction <= 1.0)) {
                out_of_range(n, "evaluation.threshold_fraction", "in (0, 1]");
            }
        }
        if (auto n = yaml::get(m_file, node, "min_cohort", "evaluation.min_cohort")) {
            out.min_cohort = yaml::as_int(m_file, n, "evaluation.min_cohort");
            if (out.min_cohort < 1) {
                out_of_range(n, "evaluation.min_cohort", ">= 1");
            }
        }
        if (auto n = yaml::get(m_file, node, "cohort_label", "evaluation.cohort_label")) {
            out.cohort_label = yaml::as_string(m_file, n, "evaluation.cohort_label");
            if (out.cohort_label.empty()) {
                yaml::fail(m_file, n, "'evaluation.cohort_label' must not be empty");
            }
        }
        if (auto n = yaml::get(m_file, node, "topology_file", "evaluation.topology_file")) {
            out.topology_file = yaml::as_string(m_file, n, "evaluation.topology_file");
        }
        if (auto n = yaml::get(m_file, node, "topology_label", "evaluation.topology_label")) {
            out.topology_label = yaml::as_string(m_file, n, "evaluation.topology_label");
        }
        if (auto floors = node["floors"]; floors && !floors.IsNull()) {
            yaml::require_map(m_file, floors, "evaluation.floors");
            for (const auto& entry : floors) {
                const std::string check = entry.first.Scalar();
                require_check(entry.first, check);
                auto& metrics = out.floors[check];
                if (entry.second.IsNull()) {
                    continue;
                }
                const std::string section = "evaluation.floors." + check;
                yaml::require_map(m_file, entry.second, section);
                for (const auto& metric : entry.second) {
                    const std::string name = metric.first.Scalar();
                    metrics[name] = yaml::as_double(m_file, metric.second, section + "." + name);
                }
            }
        }
    }

    void parse_actions(const YAML::Node& node, ActionsConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "actions",
                                  {"targets", "max_action_fraction", "min_actions", "scontrol"});
        if (auto n = yaml::get(m_file, node, "targets", "actions.targets")) {
            if (!n.IsSequence()) {
                yaml::fail(m_file, n, "'actions.targets' must be a list");
            }
            out.targets.clear();
            for (const auto& item : n) {
                auto target = yaml::as_string(m_file, item, "actions.targets");
                if (target != "slurm" && target != "k8s") {
                    yaml::fail(m_file, item,
                               "unknown target '" + target +
                                   "' in 'actions.targets' (allowed: "
                                   "slurm, k8s)");
                }
                out.targets.push_back(target);
            }
        }
        if (auto n =
                yaml::get(m_file, node, "max_action_fraction", "actions.max_action_fraction")) {
            out.max_action_fraction = yaml::as_double(m_file, n, "actions.max_action_fraction");
            if (out.max_action_fraction < 0.0 || out.max_action_fraction > 1.0) {
                out_of_range(n, "actions.max_action_fraction", "in [0, 1]");
            }
        }
        if (auto n = yaml::get(m_file, node, "min_actions", "actions.min_actions")) {
            out.min_actions = yaml::as_int(m_file, n, "actions.min_actions");
            if (out.min_actions < 0) {
                out_of_range(n, "actions.min_actions", ">= 0");
            }
        }
        if (auto n = yaml::get(m_file, node, "scontrol", "actions.scontrol")) {
            out.scontrol = yaml::as_string(m_file, n, "actions.scontrol");
            if (out.scontrol.empty()) {
                yaml::fail(m_file, n, "'actions.scontrol' must not be empty");
            }
        }
    }

    void parse_deadlines(const YAML::Node& node, DeadlineConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "deadlines",
                                  {"connect_s", "heartbeat_s", "step_slack_s"});
        if (auto n = yaml::get(m_file, node, "connect_s", "deadlines.connect_s")) {
            out.connect_s = yaml::as_double(m_file, n, "deadlines.connect_s");
            if (!(out.connect_s > 0.0)) {
                out_of_range(n, "deadlines.connect_s", "> 0");
            }
        }
        if (auto n = yaml::get(m_file, node, "heartbeat_s", "deadlines.heartbeat_s")) {
            out.heartbeat_s = yaml::as_double(m_file, n, "deadlines.heartbeat_s");
            if (!(out.heartbeat_s > 0.0)) {
                out_of_range(n, "deadlines.heartbeat_s", "> 0");
            }
        }
        if (auto n = yaml::get(m_file, node, "step_slack_s", "deadlines.step_slack_s")) {
            out.step_slack_s = yaml::as_double(m_file, n, "deadlines.step_slack_s");
            if (out.step_slack_s < 0.0) {
                out_of_range(n, "deadlines.step_slack_s", ">= 0");
            }
        }
    }

    void parse_controller(const YAML::Node& node, ControllerConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "controller",
                                  {"listen", "port", "advertise", "tls"});
        if (auto n = yaml::get(m_file, node, "listen", "controller.listen")) {
            out.listen = yaml::as_string(m_file, n, "controller.listen");
            // The controller binds this literally; a typo is better caught here than at bind().
            unsigned char buffer[16];
            if (::inet_pton(AF_INET, out.listen.c_str(), buffer) != 1 &&
                ::inet_pton(AF_INET6, out.listen.c_str(), buffer) != 1) {
                yaml::fail(m_file, n, "'controller.listen' must be an IPv4 or IPv6 address");
            }
        }
        if (auto n = yaml::get(m_file, node, "port", "controller.port")) {
            out.port = yaml::as_int(m_file, n, "controller.port");
            if (out.port < 0 || out.port > 65535) {
                out_of_range(n, "controller.port", "in 0..65535");
            }
        }
        if (auto n = yaml::get(m_file, node, "advertise", "controller.advertise")) {
            // May be a host name the agents resolve; empty means "per-node routed source address".
            out.advertise = yaml::as_string(m_file, n, "controller.advertise");
        }
        if (auto n = yaml::get(m_file, node, "tls", "controller.tls")) {
            parse_tls(n, out.tls);
        }
    }

    // cert, key and ca are all required; each must be a readable file on the controller (the CA
    // too: the controller checks its own certificate against it before any agent starts).
    void parse_tls(const YAML::Node& node, TlsConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "controller.tls",
                                  {"cert", "key", "ca", "server_name"});
        auto file = [&](const char* key, std::string& value) {
            const std::string name = std::string("controller.tls.") + key;
            auto n = yaml::get(m_file, node, key, name);
            if (!n) {
                yaml::fail(m_file, node, "'controller.tls' needs '" + std::string(key) + "'");
            }
            value = yaml::as_string(m_file, n, name);
            if (::access(value.c_str(), R_OK) != 0) {
                yaml::fail(m_file, n,
                           "'" + name + "': cannot read '" + value + "': " + std::strerror(errno));
            }
        };
        file("cert", out.cert);
        file("key", out.key);
        file("ca", out.ca);
        if (auto n = yaml::get(m_file, node, "server_name", "controller.tls.server_name")) {
            out.server_name = yaml::as_string(m_file, n, "controller.tls.server_name");
            if (out.server_name.empty()) {
                yaml::fail(m_file, n, "'controller.tls.server_name' is empty (omit it instead)");
            }
        }
    }

    void parse_k8s(const YAML::Node& node, KubernetesConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "k8s",
                                  {"kubeconfig", "context", "namespace", "image", "service_account",
                                   "request_timeout_s", "max_retries"});
        auto text = [&](const char* key, std::string& value, bool may_be_empty) {
            const std::string path = std::string("k8s.") + key;
            if (auto n = yaml::get(m_file, node, key, path)) {
                value = yaml::as_string(m_file, n, path);
                if (!may_be_empty && value.empty()) {
                    yaml::fail(m_file, n, "'" + path + "' must not be empty");
                }
            }
        };
        text("kubeconfig", out.kubeconfig, true);
        text("context", out.context, true);
        text("namespace", out.namespace_name, false);
        text("image", out.image, true);
        text("service_account", out.service_account, false);
        if (auto n = yaml::get(m_file, node, "request_timeout_s", "k8s.request_timeout_s")) {
            out.request_timeout_s = yaml::as_double(m_file, n, "k8s.request_timeout_s");
            if (!(out.request_timeout_s > 0.0)) {
                out_of_range(n, "k8s.request_timeout_s", "> 0");
            }
        }
        if (auto n = yaml::get(m_file, node, "max_retries", "k8s.max_retries")) {
            out.max_retries = yaml::as_int(m_file, n, "k8s.max_retries");
            if (out.max_retries < 0 || out.max_retries > 10) {
                out_of_range(n, "k8s.max_retries", "in 0..10");
            }
        }
    }

    // The training job the report estimates the impact for (controller/job_impact.hpp).
    nlohmann::json parse_job(const YAML::Node& node) const {
        yaml::reject_unknown_keys(m_file, node, "job",
                                  {"params", "dtype", "nodes", "gpus_per_node", "compute_ms"});
        nlohmann::json job = nlohmann::json::object();
        auto n = yaml::get(m_file, node, "params", "job.params");
        if (!n) {
            yaml::fail(m_file, node, "'job.params' (model parameters, e.g. 7e9) is required");
        }
        job["params"] = yaml::as_double(m_file, n, "job.params");
        if (job["params"].get<double>() <= 0) {
            out_of_range(n, "job.params", "> 0");
        }
        auto c = yaml::get(m_file, node, "compute_ms", "job.compute_ms");
        if (!c) {
            yaml::fail(m_file, node, "'job.compute_ms' (compute time per step) is required");
        }
        job["compute_ms"] = yaml::as_double(m_file, c, "job.compute_ms");
        if (job["compute_ms"].get<double>() <= 0) {
            out_of_range(c, "job.compute_ms", "> 0");
        }
        // yaml-cpp nodes are references: assigning one to another writes into the document, so
        // each lookup gets its own variable.
        if (auto d = yaml::get(m_file, node, "dtype", "job.dtype")) {
            std::string dtype = yaml::as_string(m_file, d, "job.dtype");
            if (dtype != "fp32" && dtype != "bf16" && dtype != "fp16" && dtype != "fp8") {
                yaml::fail(m_file, d, "'job.dtype' must be one of fp32, bf16, fp16, fp8");
            }
            job["dtype"] = dtype;
        }
        if (auto k = yaml::get(m_file, node, "nodes", "job.nodes")) {
            job["nodes"] = yaml::as_int(m_file, k, "job.nodes");
            if (job["nodes"].get<int>() < 0) {
                out_of_range(k, "job.nodes", ">= 0 (0: the nodes in the run)");
            }
        }
        if (auto g = yaml::get(m_file, node, "gpus_per_node", "job.gpus_per_node")) {
            job["gpus_per_node"] = yaml::as_int(m_file, g, "job.gpus_per_node");
            if (job["gpus_per_node"].get<int>() < 1) {
                out_of_range(g, "job.gpus_per_node", ">= 1");
            }
        }
        return job;
    }

    void parse_checks(const YAML::Node& node, std::vector<std::string>& out) const {
        if (!node.IsSequence()) {
            yaml::fail(m_file, node, "'checks' must be a list of check names");
        }
        if (node.size() == 0) {
            // Nothing to run would report every node healthy: fail-open.
            yaml::fail(m_file, node, "'checks' must name at least one check");
        }
        out.clear();
        for (const auto& item : node) {
            auto check = yaml::as_string(m_file, item, "checks");
            require_check(item, check);
            if (std::find(out.begin(), out.end(), check) != out.end()) {
                yaml::fail(m_file, item, "duplicate check '" + check + "' in 'checks'");
            }
            out.push_back(check);
        }
    }

    void parse_params(const YAML::Node& node, std::map<std::string, nlohmann::json>& out) const {
        yaml::require_map(m_file, node, "params");
        for (const auto& entry : node) {
            const std::string check = entry.first.Scalar();
            require_check(entry.first, check);
            const auto& specs = m_catalog.at(check);
            nlohmann::json given = nlohmann::json::object();
            if (!entry.second.IsNull()) {
                const std::string section = "params." + check;
                yaml::require_map(m_file, entry.second, section);
                for (const auto& param : entry.second) {
                    const std::string name = param.first.Scalar();
                    auto spec = std::find_if(specs.begin(), specs.end(),
                                             [&](const ParamSpec& s) { return s.name == name; });
                    if (spec == specs.end()) {
                        yaml::fail(m_file, param.first,
                                   "unknown parameter '" + name + "' for check '" + check +
                                       "' (declared: " + declared_param_names(specs) + ")");
                    }
                    auto value = yaml::to_json(param.second);
                    if (!param_type_matches(spec->type, value)) {
                        yaml::fail(m_file, param.first,
                                   "'" + section + "." + name + "' must be " +
                                       std::string(describe_type(spec->type)));
                    }
                    given[name] = std::move(value);
                }
            }
            out[check] = std::move(given);
        }
    }

    std::string m_file;
    const ParamCatalog& m_catalog;
};

}  // namespace

RunConfig parse_config(const std::string& text, const std::string& name,
                       const ParamCatalog& catalog) {
    return ConfigParser(name, catalog).parse(yaml::parse(text, name));
}

RunConfig load_config(const std::string& path, const ParamCatalog& catalog) {
    return parse_config(yaml::read_file(path), path, catalog);
}

RunConfig default_config(const ParamCatalog& catalog) {
    return ConfigParser("<defaults>", catalog).parse(YAML::Node());
}

}  // namespace preflight::core
