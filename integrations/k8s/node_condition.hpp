// A NodeCondition for preflight's node-local health (the way node-problem-detector, the EKS node
// monitoring agent and gpud show node health): type PreflightHealthy, status True (checks pass),
// False (a check failed) or Unknown (a check could not judge: never False), a CamelCase reason, a
// message, lastHeartbeatTime (every write) and lastTransitionTime (changed only when the status
// changes). Written with a strategic merge patch of PATCH /api/v1/nodes/NAME/status, which the
// API server merges into status.conditions by `type` (NodeStatus.Conditions is
// patchStrategy=merge, patchMergeKey=type), so the kubelet's own conditions are left alone.
// RBAC: get nodes (to keep lastTransitionTime), patch nodes/status, create events (one per
// status change, on the Node, in namespace default).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/result.hpp"
#include "integrations/k8s/client.hpp"

namespace preflight::outcome::k8s {

inline constexpr const char* k_condition_type = "PreflightHealthy";
// A condition message is cut to this many bytes (kubectl describe shows it on one line).
inline constexpr std::size_t k_max_condition_message = 1024;

struct NodeCondition {
    std::string type = k_condition_type;
    std::string status;  // True, False, Unknown
    std::string reason;  // CamelCase
    std::string message;
};

// The condition for a node-local verdict: pass (or skip only) -> True PreflightChecksPassed;
// warn -> True PreflightChecksPassedWithWarnings; fail -> False PreflightCheckFailed; error (a
// check that crashed, hung past the budget, or a run that gave no outcome) -> Unknown
// PreflightCannotJudge. The message is the verdict's reasons, joined and cut. Pure.
NodeCondition condition_for(core::Verdict verdict, const std::vector<std::string>& reasons,
                            const std::string& type = k_condition_type);

// The strategic merge patch that sets condition c on node (a Node as read): lastTransitionTime is
// the node's current one for c.type when its status is unchanged, else now. Pure.
nlohmann::json condition_patch(const nlohmann::json& node, const NodeCondition& c,
                               const std::string& now_rfc3339);

// The node's current condition of this type, if any. Pure.
std::optional<nlohmann::json> current_condition(const nlohmann::json& node,
                                                const std::string& type);

struct ConditionOutcome {
    std::string previous_status;  // "" when the node had no such condition
    bool transitioned = false;    // status changed (or was set for the first time)
    nlohmann::json patch;         // what was sent
};

// Reads the Node, patches nodes/status and, on a transition, posts an Event on the Node
// (Normal PreflightHealthy / Warning PreflightUnhealthy / Warning PreflightUnknown); a lost Event
// is a warning only.
core::Result<ConditionOutcome> set_node_condition(Client& client, const std::string& node,
                                                  const NodeCondition& condition,
                                                  bool post_event = true);

}  // namespace preflight::outcome::k8s
