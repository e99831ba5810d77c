// The `k8s.pod_template` parser, part 3: volumes, containers and their resources, env, mounts and
// securityContext, init containers (the class: k8s_pod_template_parser.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/k8s_names.hpp"
#include "core/k8s_pod_template.hpp"
#include "core/k8s_pod_template_parser.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::k8s::detail {

json PodTemplateParser::volumes(const YAML::Node& node, const std::string& path,
                                std::set<std::string>& names) const {
    json out = json::array();
    int i = 0;
    for (const auto& v : sequence(node, path)) {
        const std::string p = path + "[" + std::to_string(i++) + "]";
        yaml::require_map(m_file, v, p);
        auto name = yaml::get(m_file, v, "name", p + ".name");
        if (!name) {
            fail(v, p, "needs 'name'");
        }
        const std::string n = text(name, p + ".name");
        if (!is_dns1123_label(n)) {
            fail(name, p + ".name", "'" + n + "' is not a DNS-1123 label");
        }
        if (n == k_tls_volume) {
            fail(name, p + ".name",
                 "'" + n + "' is preflight's (the controller's CA) and cannot be replaced");
        }
        if (!names.insert(n).second) {
            fail(name, p + ".name", "'" + n + "' is given twice");
        }
        if (v.size() != 2) {
            fail(v, p, "needs exactly one volume source besides 'name' (e.g. emptyDir)");
        }
        out.push_back(yaml::to_json(v));
    }
    return out;
}

json PodTemplateParser::containers(const YAML::Node& node, const std::string& path,
                                   const std::set<std::string>& volume_names) const {
    json out = json::array();
    int i = 0;
    for (const auto& c : sequence(node, path)) {
        const std::string p = path + "[" + std::to_string(i++) + "]";
        yaml::require_map(m_file, c, p);
        auto name = yaml::get(m_file, c, "name", p + ".name");
        if (!name || text(name, p + ".name") != k_agent_container) {
            fail(name ? name : YAML::Node(c), p + ".name",
                 "must be 'agent': the agent container is the only one adapted (use "
                 "initContainers for others)");
        }
        static const std::map<std::string, std::string> k_own = {
            {"command", "is preflight's agent command and cannot be set"},
            {"args", "is preflight's agent command and cannot be set"},
            {"image", "is set from k8s.image"},
        };
        for (const auto& entry : c) {
            const std::string key = entry.first.Scalar();
            if (auto it = k_own.find(key); it != k_own.end()) {
                fail(entry.first, p + "." + key, it->second);
            }
        }
        yaml::reject_unknown_keys(m_file, c, p,
                                  {"name", "resources", "env", "envFrom", "volumeMounts",
                                   "securityContext", "imagePullPolicy", "workingDir"});
        json container = {{"name", std::string(k_agent_container)}};
        if (auto r = yaml::get(m_file, c, "resources", p + ".resources")) {
            container["resources"] = resources(r, p + ".resources");
        }
        if (auto e = yaml::get(m_file, c, "env", p + ".env")) {
            container["env"] = env(e, p + ".env");
        }
        if (auto e = yaml::get(m_file, c, "envFrom", p + ".envFrom")) {
            sequence(e, p + ".envFrom");
            container["envFrom"] = yaml::to_json(e);
        }
        if (auto m = yaml::get(m_file, c, "volumeMounts", p + ".volumeMounts")) {
            container["volumeMounts"] = volume_mounts(m, p + ".volumeMounts", volume_names);
        }
        if (auto s = yaml::get(m_file, c, "securityContext", p + ".securityContext")) {
            container["securityContext"] = security_context(s, p + ".securityContext");
        }
        for (const char* key : {"imagePullPolicy", "workingDir"}) {
            if (auto n = yaml::get(m_file, c, key, p + "." + key)) {
                const std::string v = text(n, p + "." + key);
                if (std::string(key) == "imagePullPolicy" && v != "Always" && v != "IfNotPresent" &&
                    v != "Never") {
                    fail(n, p + "." + key, "must be Always, IfNotPresent or Never");
                }
                container[key] = v;
            }
        }
        out.push_back(container);
    }
    if (out.size() > 1) {
        fail(node, path, "names the agent container more than once");
    }
    return out;
}

// ValidateContainerResourceRequirements: names, quantities; extended resources (any domain
// but kubernetes.io: nvidia.com/gpu, rdma/...) are integers, need a limit, and a request must
// equal it.
json PodTemplateParser::resources(const YAML::Node& node, const std::string& path) const {
    yaml::reject_unknown_keys(m_file, node, path, {"limits", "requests", "claims"});
    json out = json::object();
    std::map<std::string, Quantity> limits;
    for (const char* kind : {"limits", "requests"}) {
        auto m = yaml::get(m_file, node, kind, path + "." + kind);
        if (!m) {
            continue;
        }
        const std::string p = path + "." + kind;
        yaml::require_map(m_file, m, p);
        out[kind] = json::object();
        for (const auto& entry : m) {
            const std::string name = entry.first.Scalar();
            const std::string rp = p + "." + name;
            if (!is_container_resource_name(name)) {
                fail(entry.first, rp,
                     "is not a container resource (cpu, memory, ephemeral-storage, "
                     "hugepages-<size>, or a domain-qualified name such as nvidia.com/gpu)");
            }
            if (!entry.second.IsScalar()) {
                fail(entry.second, rp, "must be a quantity");
            }
            const std::string amount = entry.second.Scalar();
            auto q = parse_quantity(amount);
            if (!q) {
                fail(entry.second, rp,
                     "'" + amount + "' is not a quantity (e.g. 8, 500m, 64Gi, 1e3)");
            }
            if (q->negative && q->value != 0) {
                fail(entry.second, rp, "must be greater than or equal to 0");
            }
            const bool extended = is_extended_resource(name);
            if (extended && !q->integer) {
                fail(entry.second, rp, "'" + amount + "' must be an integer");
            }
            if (std::string(kind) == "limits") {
                limits[name] = *q;
            } else if (extended) {
                auto l = limits.find(name);
                if (l == limits.end()) {
                    fail(entry.first, rp,
                         "is an extended resource: set it in limits (a request alone is "
                         "refused: 'Limit must be set for non overcommitable resources')");
                }
                // 8 and 8000m are the same amount (Quantity.Cmp); the doubles may differ
                // in the last bits.
                if (std::fabs(l->second.value - q->value) >
                    1e-9L * std::max(1.0L, std::fabs(q->value))) {
                    fail(entry.second, rp,
                         "must be equal to the " + name +
                             " limit (extended resources cannot be overcommitted)");
                }
            }
            out[kind][name] = yaml::to_json(entry.second);
        }
    }
    if (auto c = yaml::get(m_file, node, "claims", path + ".claims")) {
        sequence(c, path + ".claims");
        out["claims"] = yaml::to_json(c);
    }
    return out;
}

json PodTemplateParser::env(const YAML::Node& node, const std::string& path) const {
    json out = json::array();
    int i = 0;
    for (const auto& e : sequence(node, path)) {
        const std::string p = path + "[" + std::to_string(i++) + "]";
        yaml::reject_unknown_keys(m_file, e, p, {"name", "value", "valueFrom"});
        auto name = yaml::get(m_file, e, "name", p + ".name");
        if (!name) {
            fail(e, p, "needs 'name'");
        }
        const std::string n = text(name, p + ".name");
        if (!is_env_var_name(n)) {
            fail(name, p + ".name",
                 "'" + n +
                     "' is not a valid environment variable name (letters, digits, '_', "
                     "'-', '.'; not starting with a digit)");
        }
        if (n == k_node_name_env || n == k_run_secret_env_name) {
            fail(name, p + ".name",
                 "'" + n +
                     "' is set by preflight (the node and the run's secret) and "
                     "cannot be set here");
        }
        json var = {{"name", n}};
        auto value = yaml::get(m_file, e, "value", p + ".value");
        auto from = yaml::get(m_file, e, "valueFrom", p + ".valueFrom");
        if (value && from) {
            fail(from, p + ".valueFrom", "may not be given together with 'value'");
        }
        if (value) {
            var["value"] = text(value, p + ".value");  // NCCL_IB_GID_INDEX: 3 stays "3"
        } else if (from) {
            yaml::require_map(m_file, from, p + ".valueFrom");
            var["valueFrom"] = yaml::to_json(from);
        } else {
            var["value"] = "";
        }
        out.push_back(var);
    }
    return out;
}

json PodTemplateParser::volume_mounts(const YAML::Node& node, const std::string& path,
                                      const std::set<std::string>& volume_names) const {
    json out = json::array();
    int i = 0;
    std::set<std::string> paths;
    for (const auto& m : sequence(node, path)) {
        const std::string p = path + "[" + std::to_string(i++) + "]";
        yaml::reject_unknown_keys(
            m_file, m, p,
            {"name", "mountPath", "readOnly", "subPath", "subPathExpr", "mountPropagation"});
        auto name = yaml::get(m_file, m, "name", p + ".name");
        auto mount = yaml::get(m_file, m, "mountPath", p + ".mountPath");
        if (!name || !mount) {
            fail(m, p, "needs 'name' and 'mountPath'");
        }
        const std::string n = text(name, p + ".name");
        if (volume_names.count(n) == 0 && n != "sys") {
            fail(name, p + ".name",
                 "names no volume: '" + n +
                     "' is neither in k8s.pod_template.spec.volumes nor preflight's 'sys'");
        }
        const std::string mp = text(mount, p + ".mountPath");
        if (mp.empty() || mp.front() != '/') {
            fail(mount, p + ".mountPath", "must be an absolute path");
        }
        if (mp == k_tls_mount_path) {
            fail(mount, p + ".mountPath", "is where preflight mounts the controller's CA");
        }
        if (!paths.insert(mp).second) {
            fail(mount, p + ".mountPath", "'" + mp + "' is given twice");
        }
        out.push_back(yaml::to_json(m));
        if (auto ro = yaml::get(m_file, m, "readOnly", p + ".readOnly")) {
            out.back()["readOnly"] = boolean(ro, p + ".readOnly");
        }
    }
    return out;
}

// Container securityContext: capabilities are checked against the Linux names (the API server
// takes any string; the runtime then refuses to start the container).
json PodTemplateParser::security_context(const YAML::Node& node, const std::string& path) const {
    yaml::require_map(m_file, node, path);
    json out = yaml::to_json(node);
    if (auto caps = yaml::get(m_file, node, "capabilities", path + ".capabilities")) {
        yaml::reject_unknown_keys(m_file, caps, path + ".capabilities", {"add", "drop"});
        for (const char* kind : {"add", "drop"}) {
            const std::string p = path + ".capabilities." + kind;
            if (auto list = yaml::get(m_file, caps, kind, p)) {
                for (const auto& cap : sequence(list, p)) {
                    const std::string c = text(cap, p);
                    if (!is_capability_name(c)) {
                        fail(cap, p,
                             "'" + c +
                                 "' is not a Linux capability (e.g. IPC_LOCK, "
                                 "SYS_NICE, NET_ADMIN)");
                    }
                }
            }
        }
    }
    for (const char* flag :
         {"privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "runAsNonRoot"}) {
        if (auto f = yaml::get(m_file, node, flag, path + "." + flag)) {
            out[flag] = boolean(f, path + "." + flag);
        }
    }
    // The API server refuses these combinations (ValidateSecurityContext).
    if (out.value("allowPrivilegeEscalation", true) == false) {
        if (out.value("privileged", false)) {
            fail(node, path, "cannot set allowPrivilegeEscalation to false and privileged to true");
        }
        for (const auto& cap :
             out.value("capabilities", json::object()).value("add", json::array())) {
            if (cap == "CAP_SYS_ADMIN") {
                fail(node, path,
                     "cannot set allowPrivilegeEscalation to false and add CAP_SYS_ADMIN");
            }
        }
    }
    return out;
}

json PodTemplateParser::init_containers(const YAML::Node& node, const std::string& path) const {
    json out = json::array();
    int i = 0;
    std::set<std::string> names;
    for (const auto& c : sequence(node, path)) {
        const std::string p = path + "[" + std::to_string(i++) + "]";
        yaml::require_map(m_file, c, p);
        auto name = yaml::get(m_file, c, "name", p + ".name");
        auto image = yaml::get(m_file, c, "image", p + ".image");
        if (!name || !image) {
            fail(c, p, "needs 'name' and 'image'");
        }
        const std::string n = text(name, p + ".name");
        if (!is_dns1123_label(n) || n == k_agent_container || !names.insert(n).second) {
            fail(name, p + ".name",
                 "'" + n + "' must be a DNS-1123 label, unique, and not 'agent'");
        }
        out.push_back(yaml::to_json(c));
    }
    return out;
}

}  // namespace preflight::core::k8s::detail
