// The pod template merge and the GPU defaults; the rules are in the header. Templates come
// checked from the config loader (core/k8s_pod_template.cpp, with file:line errors); the checks
// here hold the same lines for templates built in code, so preflight's command, secret, labels,
// own tolerations and node pinning never depend on who wrote the template.
#include "integrations/k8s/pod_template_merge.hpp"

#include <algorithm>
#include <set>

#include "core/k8s_names.hpp"
#include "core/k8s_pod_template.hpp"

namespace preflight::controller::k8s {
namespace {

using nlohmann::json;
namespace ck = core::k8s;

constexpr const char* k_field = "k8s.pod_template";
constexpr const char* k_required = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr const char* k_preferred = "preferredDuringSchedulingIgnoredDuringExecution";
constexpr const char* k_shm_volume = "dshm";

core::Error refused(const std::string& field, const std::string& why) {
    return core::Error{"'" + std::string(k_field) + "." + field + "' " + why};
}

// Appends items to list; an item whose identity (same_as) matches an earlier one replaces it in
// place ("later wins").
template <class Same>
void merge_list(json& list, const json& items, Same same_as) {
    if (!list.is_array()) {
        list = json::array();
    }
    for (const auto& item : items) {
        auto it =
            std::find_if(list.begin(), list.end(), [&](const json& e) { return same_as(e, item); });
        if (it != list.end()) {
            *it = item;
        } else {
            list.push_back(item);
        }
    }
}

bool same_field(const json& a, const json& b, const char* key) {
    return a.value(key, std::string()) == b.value(key, std::string());
}

json* agent_container(json& spec) {
    for (auto& c : spec["containers"]) {
        if (c.value("name", std::string()) == ck::k_agent_container) {
            return &c;
        }
    }
    return nullptr;
}

core::Status merge_container(json& agent, const json& tc, const std::string& path) {
    for (const auto& [key, value] : tc.items()) {
        if (key == "name") {
            continue;
        }
        if (key == "command" || key == "args") {
            return refused(path + "." + key, "is preflight's agent command and cannot be set");
        }
        if (key == "image") {
            return refused(path + ".image", "is set from k8s.image");
        }
        if (key == "resources") {
            json& res = agent["resources"];
            if (!res.is_object()) {
                res = json::object();
            }
            for (const auto& [kind, list] : value.items()) {
                if (kind == "limits" || kind == "requests") {
                    for (const auto& [name, amount] : list.items()) {
                        res[kind][name] = amount;
                    }
                } else {
                    res[kind] = list;
                }
            }
        } else if (key == "env") {
            for (const auto& e : value) {
                const std::string name = e.value("name", std::string());
                if (name == ck::k_node_name_env || name == ck::k_run_secret_env_name) {
                    return refused(path + ".env",
                                   "'" + name + "' is set by preflight and cannot be set here");
                }
            }
            merge_list(agent["env"], value,
                       [](const json& a, const json& b) { return same_field(a, b, "name"); });
        } else if (key == "volumeMounts") {
            for (const auto& m : value) {
                if (m.value("mountPath", std::string()) == ck::k_tls_mount_path) {
                    return refused(path + ".volumeMounts",
                                   "/etc/preflight/tls is where preflight mounts the CA");
                }
            }
            merge_list(agent["volumeMounts"], value,
                       [](const json& a, const json& b) { return same_field(a, b, "mountPath"); });
        } else if (key == "securityContext") {
            json& sc = agent["securityContext"];
            for (const auto& [k, v] : value.items()) {
                if (k != "capabilities") {
                    sc[k] = v;
                    continue;
                }
                for (const auto& [kind, caps] : v.items()) {
                    json& to = sc["capabilities"][kind];
                    if (!to.is_array()) {
                        to = json::array();
                    }
                    for (const auto& cap : caps) {
                        if (std::find(to.begin(), to.end(), cap) == to.end()) {
                            to.push_back(cap);
                        }
                    }
                }
            }
            bool sys_admin = false;
            for (const auto& cap :
                 sc.value("capabilities", json::object()).value("add", json::array())) {
                sys_admin = sys_admin || cap == "CAP_SYS_ADMIN";
            }
            if ((sc.value("privileged", false) || sys_admin) &&
                !value.contains("allowPrivilegeEscalation")) {
                sc.erase("allowPrivilegeEscalation");
            }
        } else if (key == "envFrom" || key == "imagePullPolicy" || key == "workingDir") {
            agent[key] = value;
        } else {
            return refused(path + "." + key, "cannot be set (not a field preflight merges)");
        }
    }
    return {};
}

core::Status merge_affinity(json& affinity, const json& ta) {
    for (const auto& [key, value] : ta.items()) {
        if (key == "nodeAffinity") {
            json& na = affinity["nodeAffinity"];
            if (value.contains(k_required)) {
                // Ours are one term per node, the template's ORed alternatives: each pair
                // (node, template term) becomes one term requiring both. A template term with no
                // requirement matches no node and stays out (with the node's field it would
                // match that node).
                const json ours = na[k_required]["nodeSelectorTerms"];
                json terms = json::array();
                for (const auto& node_term : ours) {
                    for (json term : value[k_required].value("nodeSelectorTerms", json::array())) {
                        if (term.value("matchExpressions", json::array()).empty() &&
                            term.value("matchFields", json::array()).empty()) {
                            continue;
                        }
                        json& fields = term["matchFields"];
                        if (!fields.is_array()) {
                            fields = json::array();
                        }
                        for (const auto& f : node_term.value("matchFields", json::array())) {
                            fields.push_back(f);
                        }
                        terms.push_back(term);
                    }
                }
                if (terms.empty()) {
                    return refused("spec.affinity.nodeAffinity." + std::string(k_required),
                                   "cannot replace preflight's node pinning (give terms with "
                                   "requirements: they are ANDed with it)");
                }
                na[k_required]["nodeSelectorTerms"] = terms;
            }
            if (value.contains(k_preferred)) {
                na[k_preferred] = value[k_preferred];
            }
        } else if (key == "podAffinity") {
            affinity["podAffinity"] = value;
        } else if (key == "podAntiAffinity") {
            json& anti = affinity["podAntiAffinity"];
            if (value.contains(k_required)) {
                if (!value[k_required].is_array() || value[k_required].empty()) {
                    return refused("spec.affinity.podAntiAffinity." + std::string(k_required),
                                   "cannot replace preflight's one-pod-per-node anti-affinity");
                }
                for (const auto& term : value[k_required]) {
                    anti[k_required].push_back(term);
                }
            }
            if (value.contains(k_preferred)) {
                anti[k_preferred] = value[k_preferred];
            }
        } else {
            return refused("spec.affinity." + key, "cannot be set");
        }
    }
    return {};
}

}  // namespace

json node_pinning_terms(const std::vector<std::string>& nodes) {
    json terms = json::array();
    for (const auto& node : nodes) {
        terms.push_back({{"matchFields", json::array({{{"key", "metadata.name"},
                                                       {"operator", "In"},
                                                       {"values", json::array({node})}}})}});
    }
    return terms;
}

bool template_sets_gpus(const json& tmpl) {
    for (const auto& c : tmpl.value("spec", json::object()).value("containers", json::array())) {
        const json res = c.value("resources", json::object());
        for (const char* kind : {"limits", "requests"}) {
            if (res.value(kind, json::object()).contains(std::string(ck::k_gpu_resource))) {
                return true;
            }
        }
    }
    return false;
}

namespace {

core::Status merge_checked(json& pod, const json& tmpl);

}  // namespace

core::Status merge_pod_template(json& pod, const json& tmpl) {
    if (!tmpl.is_object() || tmpl.empty()) {
        return {};
    }
    try {
        return merge_checked(pod, tmpl);
    } catch (const json::exception& e) {
        // Only a template built in code can have other types than the loader's.
        return core::Error{"'" + std::string(k_field) + "' has a field of the wrong type (" +
                           e.what() + ")"};
    }
}

namespace {

core::Status merge_checked(json& pod, const json& tmpl) {
    for (const auto& [key, value] : tmpl.items()) {
        if (key != "metadata" && key != "spec") {
            return refused(key, "cannot be set (metadata and spec only)");
        }
    }
    if (tmpl.contains("metadata")) {
        for (const auto& [key, value] : tmpl["metadata"].items()) {
            if (key != "labels" && key != "annotations") {
                return refused("metadata." + key, "cannot be set");
            }
            for (const auto& [k, v] : value.items()) {
                if (key == "labels" && (k == ck::k_run_label || k == ck::k_name_label)) {
                    return refused("metadata.labels." + k, "is set by preflight");
                }
                pod["metadata"][key][k] = v;
            }
        }
    }
    const json ts = tmpl.value("spec", json::object());
    json& spec = pod["spec"];
    static const std::set<std::string> k_taken = {"runtimeClassName",
                                                  "priorityClassName",
                                                  "schedulerName",
                                                  "hostIPC",
                                                  "hostPID",
                                                  "securityContext",
                                                  "imagePullSecrets",
                                                  "resourceClaims",
                                                  "hostNetwork",
                                                  "dnsPolicy",
                                                  "terminationGracePeriodSeconds"};
    for (const auto& [key, value] : ts.items()) {
        if (k_taken.count(key) != 0) {
            spec[key] = value;
        } else if (key == "nodeSelector") {
            for (const auto& [k, v] : value.items()) {
                spec["nodeSelector"][k] = v;
            }
        } else if (key == "tolerations") {
            for (const auto& t : value) {
                for (auto own : ck::k_own_taint_keys) {
                    if (t.value("key", std::string()) == own) {
                        return refused(
                            "spec.tolerations",
                            "'" + std::string(own) + "' is tolerated by preflight itself");
                    }
                }
            }
            merge_list(spec["tolerations"], value, [](const json& a, const json& b) {
                return same_field(a, b, "key") && same_field(a, b, "effect");
            });
        } else if (key == "affinity") {
            if (auto st = merge_affinity(spec["affinity"], value); !st) {
                return st;
            }
        } else if (key == "volumes") {
            for (const auto& v : value) {
                if (v.value("name", std::string()) == ck::k_tls_volume) {
                    return refused("spec.volumes", "'tls-ca' is preflight's (the controller's CA)");
                }
            }
            merge_list(spec["volumes"], value,
                       [](const json& a, const json& b) { return same_field(a, b, "name"); });
        } else if (key == "containers") {
            int i = 0;
            for (const auto& c : value) {
                const std::string path = "spec.containers[" + std::to_string(i++) + "]";
                if (c.value("name", std::string()) != ck::k_agent_container) {
                    return refused(path + ".name", "must be 'agent' (the only container adapted)");
                }
                json* agent = agent_container(spec);
                if (agent == nullptr) {
                    return core::Error{"the agent Job has no container 'agent'"};
                }
                if (auto st = merge_container(*agent, c, path); !st) {
                    return st;
                }
            }
        } else if (key == "initContainers") {
            for (const auto& c : value) {
                if (c.value("name", std::string()) == ck::k_agent_container) {
                    return refused("spec.initContainers", "may not be called 'agent'");
                }
                spec["initContainers"].push_back(c);
            }
        } else {
            return refused("spec." + key, "cannot be set (preflight's, or not a field it merges)");
        }
    }
    if (ts.contains("hostNetwork") && ts["hostNetwork"] == false && !ts.contains("dnsPolicy")) {
        spec["dnsPolicy"] = "ClusterFirst";  // ClusterFirstWithHostNet is for host-network pods
    }
    // Every mount must name a volume (the API server answers 422 "Not found" otherwise), and a
    // default volume nothing mounts any more (dshm replaced at /dev/shm) is dropped.
    std::set<std::string> mounted;
    for (const auto& c : spec["containers"]) {
        for (const auto& m : c.value("volumeMounts", json::array())) {
            mounted.insert(m.value("name", std::string()));
        }
    }
    std::set<std::string> defined;
    json volumes = json::array();
    for (const auto& v : spec.value("volumes", json::array())) {
        const std::string name = v.value("name", std::string());
        if (name == k_shm_volume && mounted.count(name) == 0) {
            continue;
        }
        defined.insert(name);
        volumes.push_back(v);
    }
    spec["volumes"] = volumes;
    for (const auto& name : mounted) {
        if (defined.count(name) == 0) {
            return refused("spec.containers[0].volumeMounts",
                           "mounts '" + name + "', which no volume defines");
        }
    }
    return {};
}

}  // namespace

void add_gpu_defaults(json& pod, int gpus_per_node) {
    json& spec = pod["spec"];
    json* agent = agent_container(spec);
    if (agent == nullptr || gpus_per_node <= 0) {
        return;
    }
    json& res = (*agent)["resources"];
    if (!res.is_object()) {
        res = json::object();
    }
    const std::string gpu(ck::k_gpu_resource);
    if (res.value("limits", json::object()).contains(gpu) ||
        res.value("requests", json::object()).contains(gpu)) {
        return;  // the template's count stands
    }
    res["limits"][gpu] = gpus_per_node;
    bool shm_mounted = false;
    for (const auto& m : agent->value("volumeMounts", json::array())) {
        shm_mounted = shm_mounted || m.value("mountPath", std::string()) == "/dev/shm";
    }
    if (!shm_mounted) {
        (*agent)["volumeMounts"].push_back({{"name", k_shm_volume}, {"mountPath", "/dev/shm"}});
        spec["volumes"].push_back({{"name", k_shm_volume}, {"emptyDir", {{"medium", "Memory"}}}});
    }
}

}  // namespace preflight::controller::k8s
