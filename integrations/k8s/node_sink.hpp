// Changes preflight makes to Kubernetes Nodes: our taints, our labels, an annotation recording what
// we set, and an Event on the Node. Every change is a read-modify-write of the Node carrying the
// resourceVersion it read (a merge patch with metadata.resourceVersion), retried on 409 Conflict,
// so a taint someone else adds meanwhile is never lost. Only preflight.dev/ keys are ever set or
// removed; a preflight.dev/degraded taint is replaced or removed only when our annotation records
// exactly that taint: one with our key that we did not set is left alone, never taken over.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "integrations/k8s/client.hpp"
#include "integrations/k8s/taint.hpp"
#include "outcome/breaker.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome::k8s {

inline constexpr std::string_view k_degraded_key = k_taint_key;
inline constexpr std::string_view k_uncertified_key = "preflight.dev/uncertified";
inline constexpr std::string_view k_status_label = "preflight.dev/status";
inline constexpr std::string_view k_busbw_label = "preflight.dev/busbw-gbps";
// JSON {"<taint key>": "<value>:<effect>"} of the taints preflight itself set on this node.
inline constexpr std::string_view k_owned_annotation = "preflight.dev/owned-taints";
inline constexpr std::string_view k_reason_annotation = "preflight.dev/reason";
inline constexpr std::string_view k_key_prefix = "preflight.dev/";

struct Taint {
    std::string key;
    std::string value;
    std::string effect = "NoSchedule";
};

// What to do to one Node. Keys outside preflight.dev/ are refused.
struct NodeChange {
    std::string node;
    std::optional<Taint> set_taint;  // add, or replace our taint with the same key
    bool only_if_tainted = false;    // set_taint only replaces one already there, never adds
    // Taint keys to remove. preflight.dev/degraded only if we set it (owned annotation);
    // preflight.dev/uncertified always (it is the certification protocol's own taint).
    std::vector<std::string> remove_taints;
    std::map<std::string, std::optional<std::string>> labels;  // value or nullopt (remove)
    std::optional<std::string> reason;  // preflight.dev/reason annotation ("" removes it)
    std::string event_type;             // "Normal" or "Warning"; empty: no Event
    std::string event_reason;           // CamelCase, e.g. PreflightFailed
    std::string event_message;
};

struct ChangeOutcome {
    bool patched = false;  // false when the Node already was as wanted
    int attempts = 0;      // PATCH attempts (conflicts retried)
    nlohmann::json patch;  // the last merge patch sent (or that would be sent)
};

// The merge patch that turns node (a Node object as read) into what change asks for, with
// metadata.resourceVersion set to the one read; null when nothing would change. Pure.
core::Result<nlohmann::json> node_patch_for(const nlohmann::json& node, const NodeChange& change);

class NodeSink {
  public:
    explicit NodeSink(Client& client, int max_conflicts = 8);

    // Reads the Node, patches it (retrying conflicts with a fresh read) and posts the Event.
    core::Result<ChangeOutcome> apply(const NodeChange& change);

  private:
    Client& m_client;
    int m_max_conflicts;
};

// True when the Node carries a taint with this key that our owned annotation records exactly
// (value and effect): only such a taint is ours to replace or remove. Pure.
bool taint_owned(const nlohmann::json& node, std::string_view key);

// The breaker's count for tainting `node`: Nodes in a NodeList carrying our owned
// preflight.dev/degraded taint, counting `node` itself, out of all Nodes listed. Pure.
MarkCount k8s_mark_count(const nlohmann::json& node_list, const std::string& node);

// For K8sSink (sink.hpp): carries out one planned k8s "taint" action (k8s/action_sink.cpp): the
// circuit breaker over the Nodes already tainted by us (a list of Nodes), then the taint from the
// action's patch, labels status=fail and busBW, the fixed reason annotation and a Warning Event
// whose message has the figures. A taint with our key that we did not set is left alone.
// Credentials are loaded on the first call; failures land in action.error.
std::function<void(const RunReport&, Action&)> make_action_sink(const core::KubernetesConfig& cfg,
                                                                const BreakerPolicy& policy = {});

// Label value for a busBW figure: "12.3" (label-value syntax, 63 characters at most).
std::string busbw_label_value(double gbps);

// The node's headline busBW (first collective check with busbw_gbps), if measured.
std::optional<double> node_busbw(const NodeReport& node);

}  // namespace preflight::outcome::k8s
