// `preflight gang-gate`: the controller of a gang gate for one training job (docs/kubernetes.md,
// "Gang gate"; examples in manifests/k8s/examples/gang-gate-*.yaml). It waits until the job's
// pods (--selector, --pods) are scheduled, runs the checks over their nodes together with
// `--launcher connect` (the pods' init containers are the agents), then publishes each pod's
// verdict into the ConfigMap --verdicts (integrations/k8s/gang_gate_verdicts.hpp), which the init
// containers wait on (integrations/k8s/agent_gang_gate.hpp). With --apply the run's actions (e.g.
// taints) are carried out as in `preflight run`, so that a restarted job avoids the nodes that
// failed. Exit code: the run's.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

SubcommandRun add_gang_gate_command(CLI::App& app);

}  // namespace preflight::controller
