// Node taints, labels, annotations and Events, with optimistic concurrency on resourceVersion.
#include "integrations/k8s/node_sink.hpp"
#include "core/check_spec.hpp"

#include <unistd.h>

#include <ctime>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "integrations/k8s/taint.hpp"

namespace preflight::outcome::k8s {

namespace {

using nlohmann::json;

bool ours(std::string_view key) {
    return key.substr(0, k_key_prefix.size()) == k_key_prefix;
}

json owned_taints(const json& node) {
    const json* ann = node.contains("metadata") ? &node["metadata"] : nullptr;
    if (ann == nullptr || !ann->contains("annotations") || !(*ann)["annotations"].is_object()) {
        return json::object();
    }
    const json& a = (*ann)["annotations"];
    auto it = a.find(std::string(k_owned_annotation));
    if (it == a.end() || !it->is_string()) {
        return json::object();
    }
    try {
        json parsed = json::parse(it->get<std::string>());
        return parsed.is_object() ? parsed : json::object();
    } catch (const std::exception&) {
        return json::object();  // not ours to trust: we own nothing on this node
    }
}

std::string taint_id(const json& t) {
    return t.value("value", std::string()) + ":" + t.value("effect", std::string());
}

}  // namespace

std::string busbw_label_value(double gbps) {
    if (!(gbps >= 0.0) || gbps > 1e9) {
        return "unknown";
    }
    return fmt::format("{:.3g}", gbps).find('e') == std::string::npos ? fmt::format("{:.3g}", gbps)
                                                                      : fmt::format("{:.0f}", gbps);
}

std::optional<double> node_busbw(const NodeReport& node) {
    for (const auto& c : node.checks) {
        auto it = c.metrics.find(std::string(core::k_busbw_metric));
        if (it != c.metrics.end()) {
            return it->second;
        }
    }
    return std::nullopt;
}

namespace {

core::Result<json> patch_for(const json& node, const NodeChange& change) {
    if (change.set_taint && !ours(change.set_taint->key)) {
        return core::Error{"refusing to set taint '" + change.set_taint->key +
                           "': preflight only sets preflight.dev/ taints"};
    }
    for (const auto& k : change.remove_taints) {
        if (!ours(k)) {
            return core::Error{"refusing to remove taint '" + k +
                               "': preflight only removes preflight.dev/ taints"};
        }
    }
    for (const auto& [k, v] : change.labels) {
        if (!ours(k)) {
            return core::Error{"refusing to change label '" + k + "': not a preflight.dev/ label"};
        }
    }
    const json& meta = node.at("metadata");
    const json taints = node.contains("spec") && node["spec"].contains("taints") &&
                                node["spec"]["taints"].is_array()
                            ? node["spec"]["taints"]
                            : json::array();
    json owned = owned_taints(node);
    const json owned_before = owned;

    bool had_taint = false;
    json new_taints = json::array();
    for (const auto& t : taints) {
        const std::string key = t.value("key", std::string());
        bool drop = false;
        if (change.set_taint && key == change.set_taint->key &&
            change.set_taint->key != k_uncertified_key &&
            !(owned.contains(key) && owned[key] == taint_id(t))) {
            // A taint with our key that our annotation does not record: an operator's (or a
            // copy's). Taking it over would let a later untaint remove it.
            return core::Error{"left alone: taint " + key + "=" + taint_id(t) +
                               " was not set by preflight (no matching " +
                               std::string(k_owned_annotation) + " record)"};
        }
        if (change.set_taint && key == change.set_taint->key &&
            t.value("effect", std::string()) == change.set_taint->effect) {
            drop = true;  // replaced below (same key and effect identify a taint)
            had_taint = true;
        }
        for (const auto& k : change.remove_taints) {
            if (key != k) {
                continue;
            }
            if (k == k_uncertified_key) {
                drop = true;
            } else if (owned.contains(k) && owned[k] == taint_id(t)) {
                drop = true;  // exactly the taint we set, not an operator's with our key
            }
        }
        if (!drop) {
            new_taints.push_back(t);
        }
    }
    for (const auto& k : change.remove_taints) {
        owned.erase(k);
    }
    if (change.set_taint && (had_taint || !change.only_if_tainted)) {
        json t = {{"key", change.set_taint->key},
                  {"value", change.set_taint->value},
                  {"effect", change.set_taint->effect}};
        // Keep an existing timeAdded-free form; the API server fills timeAdded for NoExecute only.
        new_taints.push_back(t);
        if (change.set_taint->key != k_uncertified_key) {
            owned[change.set_taint->key] = taint_id(t);
        }
    }

    json patch = json::object();
    if (new_taints != taints) {
        patch["spec"]["taints"] = new_taints;
    }
    const json labels =
        meta.contains("labels") && meta["labels"].is_object() ? meta["labels"] : json::object();
    for (const auto& [k, v] : change.labels) {
        const bool has = labels.contains(k);
        if (v) {
            if (!has || labels[k] != *v) {
                patch["metadata"]["labels"][k] = *v;
            }
        } else if (has) {
            patch["metadata"]["labels"][k] = nullptr;
        }
    }
    const json annotations = meta.contains("annotations") && meta["annotations"].is_object()
                                 ? meta["annotations"]
                                 : json::object();
    if (owned != owned_before) {
        if (owned.empty()) {
            if (annotations.contains(std::string(k_owned_annotation))) {
                patch["metadata"]["annotations"][std::string(k_owned_annotation)] = nullptr;
            }
        } else {
            patch["metadata"]["annotations"][std::string(k_owned_annotation)] = owned.dump();
        }
    }
    if (change.reason) {
        const std::string key(k_reason_annotation);
        if (change.reason->empty()) {
            if (annotations.contains(key)) {
                patch["metadata"]["annotations"][key] = nullptr;
            }
        } else if (!annotations.contains(key) || annotations[key] != *change.reason) {
            patch["metadata"]["annotations"][key] = *change.reason;
        }
    }
    if (patch.empty()) {
        return json(nullptr);
    }
    // The server refuses the patch with 409 when the Node changed since we read it.
    patch["metadata"]["resourceVersion"] = meta.at("resourceVersion");
    return patch;
}

}  // namespace

core::Result<json> node_patch_for(const json& node, const NodeChange& change) {
    try {
        return patch_for(node, change);
    } catch (const json::exception& e) {
        // A Node without metadata or resourceVersion is not one we can change safely.
        return core::Error{std::string("unexpected Node object: ") + e.what()};
    }
}

NodeSink::NodeSink(Client& client, int max_conflicts)
    : m_client(client), m_max_conflicts(max_conflicts) {}

core::Result<ChangeOutcome> NodeSink::apply(const NodeChange& change) {
    const std::string path = "/api/v1/nodes/" + url_escape(change.node);
    ChangeOutcome out;
    json node;
    for (;;) {
        auto got = m_client.get(path, Access{"get", "nodes", "", ""});
        if (!got) {
            return core::Error{"node " + change.node + ": " + got.error().message};
        }
        node = *got;
        auto patch = node_patch_for(node, change);
        if (!patch) {
            return core::Error{"node " + change.node + ": " + patch.error().message};
        }
        if (patch->is_null()) {
            break;  // already as wanted
        }
        out.patch = *patch;
        ++out.attempts;
        auto r = m_client.request("PATCH", path, patch->dump(), "application/merge-patch+json");
        if (!r) {
            return core::Error{"node " + change.node + ": patch nodes: " + r.error().message};
        }
        if (r->status == 409) {
            if (out.attempts > m_max_conflicts) {
                return core::Error{"node " + change.node +
                                   ": patch nodes: still conflicting after " +
                                   std::to_string(out.attempts) + " attempts: " + r->message()};
            }
            spdlog::debug("node {}: resourceVersion conflict, reading it again", change.node);
            continue;
        }
        if (r->status < 200 || r->status >= 300) {
            return core::Error{
                "node " + change.node + ": " +
                describe_failure(*r, Access{"patch", "nodes", "", ""}, m_client.cluster().source)};
        }
        out.patched = true;
        break;
    }
    if (!change.event_type.empty()) {
        const std::string name = node["metadata"].value("name", change.node);
        std::string host = "preflight";
        char buf[256];
        if (::gethostname(buf, sizeof buf) == 0) {
            buf[sizeof buf - 1] = '\0';
            host = buf;
        }
        json event = {
            {"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"generateName", name + ".preflight-"}, {"namespace", "default"}}},
            // Node events carry the node name as uid (the kubelet does so, and kubectl describe
            // node looks them up that way).
            {"involvedObject",
             {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", name}, {"uid", name}}},
            {"reason", change.event_reason},
            {"message", change.event_message},
            {"type", change.event_type},
            {"source", {{"component", "preflight"}}},
            {"reportingComponent", "preflight"},
            {"reportingInstance", host},
            {"firstTimestamp", core::utc_now_rfc3339()},
            {"lastTimestamp", core::utc_now_rfc3339()},
            {"count", 1},
        };
        auto posted = m_client.post("/api/v1/namespaces/default/events", event,
                                    Access{"create", "events", "", "default"});
        if (!posted) {
            // The taint is what protects the next job; a lost Event is worth a warning only.
            spdlog::warn("node {}: {}", change.node, posted.error().message);
        }
    }
    return out;
}

bool taint_owned(const json& node, std::string_view key) {
    try {
        const json owned = owned_taints(node);
        const std::string k(key);
        if (!owned.contains(k) || !node.contains("spec") || !node["spec"].contains("taints") ||
            !node["spec"]["taints"].is_array()) {
            return false;
        }
        for (const auto& t : node["spec"]["taints"]) {
            if (t.is_object() && t.value("key", std::string()) == k && owned[k] == taint_id(t)) {
                return true;
            }
        }
    } catch (const json::exception&) {
        // A Node we cannot read is not proof that we own anything on it.
    }
    return false;
}

}  // namespace preflight::outcome::k8s
