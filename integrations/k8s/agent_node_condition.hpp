// `preflight-agent --standalone ... --k8s-node-condition [--interval S] [--once]`: the DaemonSet
// mode (manifests/k8s/examples/node-health-daemonset.yaml). Every interval it runs the standalone
// node-local checks once — as a child `preflight-agent` with the same standalone options plus
// `--outcome FILE`, so that a check that hangs past the budget or crashes ends that run only, not
// the loop — and sets the node's PreflightHealthy condition from the outcome through nodes/status
// (integrations/k8s/node_condition.hpp): True when the checks pass, False when one fails, Unknown
// when they could not judge or gave no outcome. The condition goes back to True when the node
// passes again. Credentials: --kubeconfig, else $KUBECONFIG, else the pod's service account.
#pragma once

#include <string>
#include <vector>

#include "integrations/k8s/node_condition.hpp"

namespace preflight::agent {

struct NodeConditionLoopOptions {
    std::string node;
    double interval_s = 300.0;  // between the starts of two check runs
    bool once = false;          // one run, then exit (for tests and CronJobs)
    std::string condition_type = outcome::k8s::k_condition_type;
    std::string kubeconfig;               // empty: $KUBECONFIG, else in-cluster
    double run_timeout_s = 60.0;          // a check run that outlives this is killed: Unknown
    std::vector<std::string> check_argv;  // the standalone run, without the loop's options
};

// The argv of one check run: this program's argv with its `node-condition` subcommand as
// `standalone` and without the loop options (--interval, --once, --condition-type, --kubeconfig,
// and the older --k8s-node-condition) and without --outcome/--termination-log, then
// `--outcome outcome_path`. argv[0] is replaced by self. Pure.
std::vector<std::string> check_run_argv(const std::vector<std::string>& argv,
                                        const std::string& self, const std::string& outcome_path);

// The condition for one check run from its outcome JSON (agent/standalone.hpp to_json) and how
// the run ended (exit code, or -1 when killed or timed out): the outcome's verdict when the file
// holds one, else Unknown naming how the run ended (a bad configuration is Unknown too: the node
// was not judged). Pure.
outcome::k8s::NodeCondition condition_from_run(const std::string& outcome_json, int exit_code,
                                               const std::string& how_it_ended,
                                               const std::string& type);

// Runs the loop until a stop signal (or one round with once). Exit code: 0 after a stop signal
// (or, with once, when the condition was set), 2 on bad options or credentials, 4 with once when
// the condition could not be written.
int run_node_condition_loop(const NodeConditionLoopOptions& options);

}  // namespace preflight::agent
