// The `k8s.pod_template` parser, part 2: tolerations and affinity (the class and the rules it
// follows: k8s_pod_template_parser.hpp, k8s_pod_template.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/k8s_names.hpp"
#include "core/k8s_pod_template.hpp"
#include "core/k8s_pod_template_parser.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::k8s::detail {

// ValidateTolerations (pkg/apis/core/validation/validation.go).
json PodTemplateParser::tolerations(const YAML::Node& node, const std::string& path) const {
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
            if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
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

json PodTemplateParser::affinity(const YAML::Node& node, const std::string& path) const {
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

}  // namespace preflight::core::k8s::detail
