// The PreflightHealthy NodeCondition through nodes/status; see node_condition.hpp.
#include "integrations/k8s/node_condition.hpp"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "core/log_text.hpp"

namespace preflight::outcome::k8s {
namespace {

using nlohmann::json;

std::string reporting_host() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) == 0 && buf[0] != '\0') {
        return buf;
    }
    return "preflight";
}

}  // namespace

NodeCondition condition_for(core::Verdict verdict, const std::vector<std::string>& reasons,
                            const std::string& type) {
    NodeCondition c;
    c.type = type;
    std::string joined;
    for (const auto& r : reasons) {
        joined += (joined.empty() ? "" : "; ") + r;
    }
    switch (verdict) {
        case core::Verdict::pass:
        case core::Verdict::skip:
            c.status = "True";
            c.reason = "PreflightChecksPassed";
            c.message = "preflight node-local checks passed";
            break;
        case core::Verdict::warn:
            c.status = "True";
            c.reason = "PreflightChecksPassedWithWarnings";
            c.message = "preflight node-local checks passed with warnings: " + joined;
            break;
        case core::Verdict::fail:
            c.status = "False";
            c.reason = "PreflightCheckFailed";
            c.message = joined.empty() ? "a preflight check failed" : joined;
            break;
        case core::Verdict::error:
        default:
            // Could not judge: a crashed or hung check, or no outcome at all. Never False.
            c.status = "Unknown";
            c.reason = "PreflightCannotJudge";
            c.message =
                "preflight could not judge this node" + (joined.empty() ? "" : ": " + joined);
            break;
    }
    // Check details carry text read from the node (interface names, tool output): escaped, so the
    // JSON is valid UTF-8 and one line, and bounded.
    // (escape_for_log adds "...(N bytes cut)" past its limit: room is left for it.)
    c.message = core::escape_for_log(c.message, k_max_condition_message - 32);
    return c;
}

std::optional<json> current_condition(const json& node, const std::string& type) {
    try {
        for (const auto& c : node.at("status").at("conditions")) {
            if (c.is_object() && c.value("type", std::string()) == type) {
                return c;
            }
        }
    } catch (const json::exception&) {
        // no status or conditions: none
    }
    return std::nullopt;
}

json condition_patch(const json& node, const NodeCondition& c, const std::string& now) {
    std::string transition = now;
    if (auto cur = current_condition(node, c.type);
        cur && cur->value("status", std::string()) == c.status &&
        cur->contains("lastTransitionTime") && (*cur)["lastTransitionTime"].is_string()) {
        transition = (*cur)["lastTransitionTime"].get<std::string>();
    }
    return {{"status",
             {{"conditions", json::array({{{"type", c.type},
                                           {"status", c.status},
                                           {"reason", c.reason},
                                           {"message", c.message},
                                           {"lastHeartbeatTime", now},
                                           {"lastTransitionTime", transition}}})}}}};
}

core::Result<ConditionOutcome> set_node_condition(Client& client, const std::string& node,
                                                  const NodeCondition& condition, bool post_event) {
    const std::string path = "/api/v1/nodes/" + url_escape(node);
    auto current = client.get(path, Access{"get", "nodes", "", ""});
    if (!current) {
        return core::Error{"node " + node + ": " + current.error().message};
    }
    ConditionOutcome out;
    if (auto cur = current_condition(*current, condition.type)) {
        out.previous_status = cur->value("status", std::string());
    }
    out.transitioned = out.previous_status != condition.status;
    out.patch = condition_patch(*current, condition, core::utc_now_rfc3339());
    auto patched =
        client.patch(path + "/status", out.patch, "application/strategic-merge-patch+json",
                     Access{"patch", "nodes/status", "", ""});
    if (!patched) {
        return core::Error{"node " + node + ": " + patched.error().message};
    }
    if (post_event && out.transitioned) {
        const bool healthy = condition.status == "True";
        const std::string now = core::utc_now_rfc3339();
        json event = {
            {"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"generateName", node + ".preflight-"}, {"namespace", "default"}}},
            {"involvedObject",
             {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", node}}},
            {"reason", healthy                       ? "PreflightHealthy"
                       : condition.status == "False" ? "PreflightUnhealthy"
                                                     : "PreflightUnknown"},
            {"message", condition.type + " " +
                            (out.previous_status.empty() ? "set" : out.previous_status + " ->") +
                            " " + condition.status + ": " + condition.message},
            {"type", healthy ? "Normal" : "Warning"},
            {"source", {{"component", "preflight"}, {"host", node}}},
            {"reportingComponent", "preflight"},
            {"reportingInstance", reporting_host()},
            {"firstTimestamp", now},
            {"lastTimestamp", now},
            {"count", 1},
        };
        auto posted = client.post("/api/v1/namespaces/default/events", event,
                                  Access{"create", "events", "", "default"});
        if (!posted) {
            spdlog::warn("node {}: {}", node, posted.error().message);
        }
    }
    return out;
}

}  // namespace preflight::outcome::k8s
