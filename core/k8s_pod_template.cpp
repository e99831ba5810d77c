// The `k8s.pod_template` parser: every field the launcher merges is checked here for its type,
// for the syntax the API server validates (quantities, extended resources, tolerations, names;
// pkg/apis/core/validation/validation.go, excerpts in tests/k8s_apiserver/VALIDATION.md), and for
// reaching into preflight's own parts of the pod (command, image, secret env, own tolerations,
// labels, the TLS volume, the one-pod-per-node anti-affinity). Subtrees preflight does not merge
// field by field (affinity terms, volume sources, init containers, pod securityContext) are taken
// as written and left to the API server.
#include "core/k8s_pod_template.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/k8s_names.hpp"
#include "core/k8s_pod_template_parser.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::k8s {
namespace detail {

json PodTemplateParser::pod_template(const YAML::Node& node) {
    const std::string path = "k8s.pod_template";
    yaml::reject_unknown_keys(m_file, node, path, {"metadata", "spec"});
    json out = json::object();
    if (auto m = yaml::get(m_file, node, "metadata", path + ".metadata")) {
        out["metadata"] = metadata(m, path + ".metadata");
    }
    if (auto s = yaml::get(m_file, node, "spec", path + ".spec")) {
        out["spec"] = spec(s, path + ".spec");
    }
    return out;
}

void PodTemplateParser::fail(const YAML::Node& node, const std::string& path,
                             const std::string& what) const {
    yaml::fail(m_file, node, "'" + path + "' " + what);
}

std::string PodTemplateParser::text(const YAML::Node& node, const std::string& path) const {
    return yaml::as_string(m_file, node, path);
}

const YAML::Node& PodTemplateParser::sequence(const YAML::Node& node,
                                              const std::string& path) const {
    if (!node.IsSequence()) {
        fail(node, path, "must be a list");
    }
    return node;
}

bool PodTemplateParser::boolean(const YAML::Node& node, const std::string& path) const {
    return yaml::as_bool(m_file, node, path);
}

// A map of strings (labels, annotations, nodeSelector); scalars are taken as written.
json PodTemplateParser::string_map(const YAML::Node& node, const std::string& path,
                                   bool label_syntax) const {
    yaml::require_map(m_file, node, path);
    json out = json::object();
    for (const auto& entry : node) {
        const std::string key = entry.first.Scalar();
        const std::string key_path = path + "." + key;
        if (!entry.second.IsScalar()) {
            fail(entry.second, key_path, "must be a string");
        }
        const std::string value = entry.second.Scalar();
        if (!is_qualified_name(key)) {
            fail(entry.first, key_path,
                 "is not a valid key ([prefix/]name: name of at most 63 alphanumerics, '-', "
                 "'_', '.')");
        }
        if (label_syntax && !is_label_value(value)) {
            fail(entry.second, key_path,
                 "value '" + value +
                     "' is not a valid label value (at most 63 alphanumerics, '-', '_', '.', "
                     "alphanumeric at both ends)");
        }
        out[key] = value;
    }
    return out;
}

json PodTemplateParser::metadata(const YAML::Node& node, const std::string& path) const {
    yaml::reject_unknown_keys(m_file, node, path, {"labels", "annotations"});
    json out = json::object();
    if (auto l = yaml::get(m_file, node, "labels", path + ".labels")) {
        out["labels"] = string_map(l, path + ".labels", true);
        for (auto own : {k_run_label, k_name_label}) {
            if (out["labels"].contains(std::string(own))) {
                fail(l[std::string(own)], path + ".labels." + std::string(own),
                     "is set by preflight (it selects the run's pods) and cannot be set here");
            }
        }
    }
    if (auto a = yaml::get(m_file, node, "annotations", path + ".annotations")) {
        out["annotations"] = string_map(a, path + ".annotations", false);
    }
    return out;
}

json PodTemplateParser::spec(const YAML::Node& node, const std::string& path) {
    yaml::require_map(m_file, node, path);
    // preflight's own fields, each with why it cannot be set.
    static const std::map<std::string, std::string> k_own = {
        {"restartPolicy", "is preflight's (Never: a node whose agent fails is that node's error)"},
        {"serviceAccountName", "is set from k8s.service_account"},
        {"serviceAccount", "is set from k8s.service_account"},
        {"automountServiceAccountToken",
         "is preflight's (false: agents never talk to the API server)"},
        {"nodeName", "is preflight's (pods are pinned to the run's nodes by node affinity)"},
    };
    static const std::set<std::string> k_allowed = {"affinity",
                                                    "tolerations",
                                                    "nodeSelector",
                                                    "runtimeClassName",
                                                    "hostNetwork",
                                                    "hostIPC",
                                                    "hostPID",
                                                    "dnsPolicy",
                                                    "priorityClassName",
                                                    "schedulerName",
                                                    "securityContext",
                                                    "imagePullSecrets",
                                                    "volumes",
                                                    "containers",
                                                    "initContainers",
                                                    "resourceClaims",
                                                    "terminationGracePeriodSeconds"};
    for (const auto& entry : node) {
        const std::string key = entry.first.Scalar();
        if (auto it = k_own.find(key); it != k_own.end()) {
            fail(entry.first, path + "." + key, it->second);
        }
        if (k_allowed.count(key) == 0) {
            std::string list;
            for (const auto& a : k_allowed) {
                list += (list.empty() ? "" : ", ") + a;
            }
            yaml::fail(m_file, entry.first,
                       "unknown key '" + key + "' in '" + path + "' (allowed: " + list + ")");
        }
    }
    json out = json::object();
    for (const char* flag : {"hostNetwork", "hostIPC", "hostPID"}) {
        if (auto n = yaml::get(m_file, node, flag, path + "." + flag)) {
            out[flag] = boolean(n, path + "." + flag);
        }
    }
    if (auto n = yaml::get(m_file, node, "runtimeClassName", path + ".runtimeClassName")) {
        const std::string v = text(n, path + ".runtimeClassName");
        if (!is_dns1123_subdomain(v)) {
            fail(n, path + ".runtimeClassName",
                 "'" + v + "' is not a DNS-1123 subdomain (lower case alphanumerics, '-', '.')");
        }
        out["runtimeClassName"] = v;
    }
    if (auto n = yaml::get(m_file, node, "dnsPolicy", path + ".dnsPolicy")) {
        const std::string v = text(n, path + ".dnsPolicy");
        if (v != "ClusterFirstWithHostNet" && v != "ClusterFirst" && v != "Default" &&
            v != "None") {
            fail(n, path + ".dnsPolicy",
                 "must be ClusterFirstWithHostNet, ClusterFirst, Default or None");
        }
        out["dnsPolicy"] = v;
    }
    for (const char* name : {"priorityClassName", "schedulerName"}) {
        if (auto n = yaml::get(m_file, node, name, path + "." + name)) {
            const std::string v = text(n, path + "." + name);
            if (!is_dns1123_subdomain(v)) {
                fail(n, path + "." + name, "'" + v + "' is not a DNS-1123 subdomain");
            }
            out[name] = v;
        }
    }
    if (auto n = yaml::get(m_file, node, "terminationGracePeriodSeconds",
                           path + ".terminationGracePeriodSeconds")) {
        const int v = yaml::as_int(m_file, n, path + ".terminationGracePeriodSeconds");
        if (v < 0) {
            fail(n, path + ".terminationGracePeriodSeconds", "must be >= 0");
        }
        out["terminationGracePeriodSeconds"] = v;
    }
    if (auto n = yaml::get(m_file, node, "nodeSelector", path + ".nodeSelector")) {
        out["nodeSelector"] = string_map(n, path + ".nodeSelector", true);
    }
    for (const char* opaque : {"securityContext", "resourceClaims"}) {
        if (auto n = yaml::get(m_file, node, opaque, path + "." + opaque)) {
            if (std::string(opaque) == "securityContext") {
                yaml::require_map(m_file, n, path + "." + opaque);
            } else {
                sequence(n, path + "." + opaque);
            }
            out[opaque] = yaml::to_json(n);
        }
    }
    if (auto n = yaml::get(m_file, node, "imagePullSecrets", path + ".imagePullSecrets")) {
        out["imagePullSecrets"] = json::array();
        int i = 0;
        for (const auto& s : sequence(n, path + ".imagePullSecrets")) {
            const std::string p = path + ".imagePullSecrets[" + std::to_string(i++) + "]";
            yaml::reject_unknown_keys(m_file, s, p, {"name"});
            auto name = yaml::get(m_file, s, "name", p + ".name");
            if (!name) {
                fail(s, p, "needs 'name'");
            }
            out["imagePullSecrets"].push_back({{"name", text(name, p + ".name")}});
        }
    }
    if (auto n = yaml::get(m_file, node, "tolerations", path + ".tolerations")) {
        out["tolerations"] = tolerations(n, path + ".tolerations");
    }
    if (auto n = yaml::get(m_file, node, "affinity", path + ".affinity")) {
        out["affinity"] = affinity(n, path + ".affinity");
    }
    std::set<std::string> volume_names;
    if (auto n = yaml::get(m_file, node, "volumes", path + ".volumes")) {
        out["volumes"] = volumes(n, path + ".volumes", volume_names);
    }
    if (auto n = yaml::get(m_file, node, "containers", path + ".containers")) {
        out["containers"] = containers(n, path + ".containers", volume_names);
    }
    if (auto n = yaml::get(m_file, node, "initContainers", path + ".initContainers")) {
        out["initContainers"] = init_containers(n, path + ".initContainers");
    }
    return out;
}

}  // namespace detail

nlohmann::json parse_pod_template(const std::string& file, const YAML::Node& node) {
    return detail::PodTemplateParser(file).pod_template(node);
}

}  // namespace preflight::core::k8s
