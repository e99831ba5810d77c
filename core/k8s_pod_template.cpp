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
#include "core/yaml_errors.hpp"

namespace preflight::core::k8s {
namespace {

using nlohmann::json;

class Parser {
  public:
    explicit Parser(std::string file) : m_file(std::move(file)) {}

    json pod_template(const YAML::Node& node) {
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

  private:
    [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                           const std::string& what) const {
        yaml::fail(m_file, node, "'" + path + "' " + what);
    }

    std::string text(const YAML::Node& node, const std::string& path) const {
        return yaml::as_string(m_file, node, path);
    }

    const YAML::Node& sequence(const YAML::Node& node, const std::string& path) const {
        if (!node.IsSequence()) {
            fail(node, path, "must be a list");
        }
        return node;
    }

    bool boolean(const YAML::Node& node, const std::string& path) const {
        return yaml::as_bool(m_file, node, path);
    }

    // A map of strings (labels, annotations, nodeSelector); scalars are taken as written.
    json string_map(const YAML::Node& node, const std::string& path, bool label_syntax) const {
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

    json metadata(const YAML::Node& node, const std::string& path) const {
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

    json spec(const YAML::Node& node, const std::string& path) {
        yaml::require_map(m_file, node, path);
        // preflight's own fields, each with why it cannot be set.
        static const std::map<std::string, std::string> k_own = {
            {"restartPolicy",
             "is preflight's (Never: a node whose agent fails is that node's error)"},
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
                fail(
                    n, path + ".runtimeClassName",
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

    // ValidateTolerations (pkg/apis/core/validation/validation.go).
    json tolerations(const YAML::Node& node, const std::string& path) const {
        json out = json::array();
        int i = 0;
        for (const auto& t : sequence(node, path)) {
            const std::string p = path + "[" + std::to_string(i++) + "]";
            yaml::reject_unknown_keys(m_file, t, p,
                                      {"key", "operator", "value", "effect", "tolerationSeconds"});
            json tol = json::object();
            std::string key;
            std::string op;
            std::string value;
            std::string effect;
            if (auto k = yaml::get(m_file, t, "key", p + ".key")) {
                key = text(k, p + ".key");
                if (!key.empty() && !is_qualified_name(key)) {
                    fail(k, p + ".key", "'" + key + "' is not a qualified name");
                }
                for (auto own : k_own_taint_keys) {
                    if (key == own) {
                        fail(k, p + ".key",
                             "'" + key +
                                 "' is tolerated by preflight itself (Exists, NoSchedule) and "
                                 "cannot be changed here");
                    }
                }
                tol["key"] = key;
            }
            if (auto o = yaml::get(m_file, t, "operator", p + ".operator")) {
                op = text(o, p + ".operator");
                if (op != "Exists" && op != "Equal") {
                    fail(o, p + ".operator", "must be Exists or Equal, not '" + op + "'");
                }
                tol["operator"] = op;
            }
            if (auto v = yaml::get(m_file, t, "value", p + ".value")) {
                value = text(v, p + ".value");
                if (op == "Exists" && !value.empty()) {
                    fail(v, p + ".value", "must be empty when 'operator' is Exists");
                }
                if (!is_label_value(value)) {
                    fail(v, p + ".value", "'" + value + "' is not a valid label value");
                }
                tol["value"] = value;
            }
            if (key.empty() && op != "Exists") {
                fail(t, p, "with no 'key' needs operator Exists (which tolerates every taint)");
            }
            if (auto e = yaml::get(m_file, t, "effect", p + ".effect")) {
                effect = text(e, p + ".effect");
                if (effect != "NoSchedule" && effect != "PreferNoSchedule" &&
                    effect != "NoExecute") {
                    fail(e, p + ".effect",
                         "must be NoSchedule, PreferNoSchedule or NoExecute (or left out: all), "
                         "not '" +
                             effect + "'");
                }
                tol["effect"] = effect;
            }
            if (auto s = yaml::get(m_file, t, "tolerationSeconds", p + ".tolerationSeconds")) {
                if (effect != "NoExecute") {
                    fail(s, p + ".tolerationSeconds", "needs effect NoExecute");
                }
                tol["tolerationSeconds"] = yaml::as_int(m_file, s, p + ".tolerationSeconds");
            }
            out.push_back(tol);
        }
        return out;
    }

    json affinity(const YAML::Node& node, const std::string& path) const {
        yaml::reject_unknown_keys(m_file, node, path,
                                  {"nodeAffinity", "podAffinity", "podAntiAffinity"});
        json out = json::object();
        const std::string required = "requiredDuringSchedulingIgnoredDuringExecution";
        const std::string preferred = "preferredDuringSchedulingIgnoredDuringExecution";
        if (auto n = yaml::get(m_file, node, "nodeAffinity", path + ".nodeAffinity")) {
            const std::string p = path + ".nodeAffinity";
            yaml::reject_unknown_keys(m_file, n, p, {required, preferred});
            if (auto r = yaml::get(m_file, n, required, p + "." + required)) {
                yaml::reject_unknown_keys(m_file, r, p + "." + required, {"nodeSelectorTerms"});
                auto terms = yaml::get(m_file, r, "nodeSelectorTerms",
                                       p + "." + required + ".nodeSelectorTerms");
                if (!terms || !terms.IsSequence() || terms.size() == 0) {
                    fail(r, p + "." + required + ".nodeSelectorTerms",
                         "must be a non-empty list (each term is ANDed with preflight's own "
                         "metadata.name requirement)");
                }
                int i = 0;
                for (const auto& term : terms) {
                    yaml::reject_unknown_keys(
                        m_file, term,
                        p + "." + required + ".nodeSelectorTerms[" + std::to_string(i++) + "]",
                        {"matchExpressions", "matchFields"});
                }
            }
            out["nodeAffinity"] = yaml::to_json(n);
        }
        if (auto n = yaml::get(m_file, node, "podAffinity", path + ".podAffinity")) {
            yaml::require_map(m_file, n, path + ".podAffinity");
            out["podAffinity"] = yaml::to_json(n);
        }
        if (auto n = yaml::get(m_file, node, "podAntiAffinity", path + ".podAntiAffinity")) {
            const std::string p = path + ".podAntiAffinity";
            yaml::reject_unknown_keys(m_file, n, p, {required, preferred});
            if (auto r = yaml::get(m_file, n, required, p + "." + required)) {
                if (!r.IsSequence() || r.size() == 0) {
                    fail(r, p + "." + required,
                         "cannot replace preflight's one-pod-per-node anti-affinity: give a "
                         "non-empty list of terms, which are added to it");
                }
            }
            out["podAntiAffinity"] = yaml::to_json(n);
        }
        return out;
    }

    json volumes(const YAML::Node& node, const std::string& path,
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

    json containers(const YAML::Node& node, const std::string& path,
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
                    if (std::string(key) == "imagePullPolicy" && v != "Always" &&
                        v != "IfNotPresent" && v != "Never") {
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
    json resources(const YAML::Node& node, const std::string& path) const {
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

    json env(const YAML::Node& node, const std::string& path) const {
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

    json volume_mounts(const YAML::Node& node, const std::string& path,
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
    json security_context(const YAML::Node& node, const std::string& path) const {
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
                fail(node, path,
                     "cannot set allowPrivilegeEscalation to false and privileged to true");
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

    json init_containers(const YAML::Node& node, const std::string& path) const {
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

    std::string m_file;
};

}  // namespace

nlohmann::json parse_pod_template(const std::string& file, const YAML::Node& node) {
    return Parser(file).pod_template(node);
}

}  // namespace preflight::core::k8s
