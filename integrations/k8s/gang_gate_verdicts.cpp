// The gang gate's pods and published verdicts; see gang_gate.hpp.
#include "integrations/k8s/gang_gate_verdicts.hpp"

#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/log_text.hpp"

namespace preflight::outcome::k8s {
namespace {

using nlohmann::json;

}  // namespace

std::vector<GangPod> gang_pods(const json& pod_list) {
    std::vector<GangPod> out;
    for (const auto& pod : pod_list.value("items", json::array())) {
        if (!pod.is_object()) {
            continue;
        }
        const json meta = pod.value("metadata", json::object());
        const json status = pod.value("status", json::object());
        const std::string phase = status.is_object() ? status.value("phase", std::string()) : "";
        if (phase == "Succeeded" || phase == "Failed" || meta.contains("deletionTimestamp")) {
            continue;
        }
        GangPod p;
        p.uid = meta.value("uid", std::string());
        p.name = meta.value("name", std::string());
        const json spec = pod.value("spec", json::object());
        p.node = spec.is_object() ? spec.value("nodeName", std::string()) : "";
        if (!p.uid.empty()) {
            out.push_back(p);
        }
    }
    return out;
}

core::Result<std::vector<GangPod>> wait_for_gang(Client& client, const std::string& ns,
                                                 const std::string& selector, int count,
                                                 std::chrono::milliseconds timeout,
                                                 std::chrono::milliseconds poll) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string path =
        "/api/v1/namespaces/" + url_escape(ns) + "/pods?labelSelector=" + url_escape(selector);
    std::size_t scheduled = 0;
    std::size_t seen = 0;
    while (true) {
        auto list = client.get(path, Access{"list", "pods", "", ns});
        if (!list) {
            return list.error();
        }
        std::vector<GangPod> pods;
        try {
            pods = gang_pods(*list);
        } catch (const json::exception& e) {
            return core::Error{"unreadable pod list: " + std::string(e.what())};
        }
        seen = pods.size();
        std::vector<GangPod> placed;
        for (const auto& p : pods) {
            if (!p.node.empty()) {
                placed.push_back(p);
            }
        }
        scheduled = placed.size();
        if (static_cast<int>(placed.size()) >= count) {
            return placed;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(poll);
    }
    return core::Error{"only " + std::to_string(scheduled) + " of " + std::to_string(count) +
                       " pods matching '" + selector + "' in namespace " + ns +
                       " were scheduled in time (" + std::to_string(seen) + " found)"};
}

std::map<std::string, NodeVerdict> node_verdicts(const RunReport& report) {
    std::map<std::string, NodeVerdict> out;
    for (const auto& n : report.nodes) {
        out[n.name] = NodeVerdict{n.verdict, n.reasons};
    }
    return out;
}

std::string verdict_text(const NodeVerdict& v) {
    std::string text = std::string(core::to_string(v.verdict)) + "\n";
    for (const auto& r : v.reasons) {
        const std::string line = core::escape_for_log(r, 512) + "\n";
        if (text.size() + line.size() > 4096) {
            break;
        }
        text += line;
    }
    return text;
}

json verdicts_patch(const json& existing, const std::vector<GangPod>& pods,
                    const std::map<std::string, NodeVerdict>& verdicts) {
    json data = json::object();
    std::set<std::string> current;
    for (const auto& p : pods) {
        current.insert(p.uid);
        auto it = verdicts.find(p.node);
        data[p.uid] = verdict_text(
            it != verdicts.end()
                ? it->second
                : NodeVerdict{core::Verdict::error, {"node " + p.node + " was not in the run"}});
    }
    if (existing.is_object() && existing.contains("data") && existing["data"].is_object()) {
        for (const auto& [key, value] : existing["data"].items()) {
            if (current.count(key) == 0) {
                data[key] = nullptr;  // a pod of an earlier attempt: drop its verdict
            }
        }
    }
    return {{"data", data}};
}

core::Status publish_verdicts(Client& client, const std::string& ns, const std::string& configmap,
                              const std::vector<GangPod>& pods,
                              const std::map<std::string, NodeVerdict>& verdicts) {
    const std::string path =
        "/api/v1/namespaces/" + url_escape(ns) + "/configmaps/" + url_escape(configmap);
    auto current = client.get(path, Access{"get", "configmaps", "", ns});
    if (!current) {
        return current.error();
    }
    auto patched =
        client.patch(path, verdicts_patch(*current, pods, verdicts), "application/merge-patch+json",
                     Access{"patch", "configmaps", "", ns});
    if (!patched) {
        return patched.error();
    }
    return {};
}

}  // namespace preflight::outcome::k8s
