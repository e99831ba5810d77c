// The agent subcommands of the Kubernetes integration: `node-condition` (the node-health
// DaemonSet: the standalone checks every --interval, their outcome as the Node's
// PreflightHealthy condition; agent_node_condition.hpp) and `gang-gate` (an init container of a
// gang gate: a session with the gate's controller, then the pod's verdict; agent_gang_gate.hpp).
#pragma once

#include <vector>

#include "agent/agent_mode.hpp"

namespace preflight::agent {

std::vector<AgentMode> k8s_agent_modes();

}  // namespace preflight::agent
