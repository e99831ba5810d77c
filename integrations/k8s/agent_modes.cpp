#include "integrations/k8s/agent_modes.hpp"

#include <memory>

#include "agent/session.hpp"
#include "integrations/k8s/agent_gang_gate.hpp"
#include "integrations/k8s/agent_node_condition.hpp"

namespace preflight::agent {

namespace {

AgentMode node_condition_mode() {
    AgentMode mode;
    mode.name = "node-condition";
    mode.summary =
        "Kubernetes DaemonSet: run the standalone checks every --interval and set the Node's "
        "condition through nodes/status";
    mode.standalone_options = true;
    mode.legacy_flags = {{"--k8s-node-condition", true}};
    mode.add = [](CLI::App& cmd) {
        auto condition = std::make_shared<NodeConditionLoopOptions>();
        cmd.add_option("--interval", condition->interval_s, "seconds between check runs")
            ->capture_default_str();
        cmd.add_flag("--once", condition->once, "one check run, then exit");
        cmd.add_option("--condition-type", condition->condition_type, "the NodeCondition type")
            ->capture_default_str();
        cmd.add_option("--kubeconfig", condition->kubeconfig,
                       "kubeconfig (default: $KUBECONFIG, else in-cluster)");
        return [condition](AgentModeContext& ctx) {
            condition->node = ctx.standalone.node;
            condition->run_timeout_s = ctx.standalone.budget_s + 30.0;
            condition->check_argv = ctx.argv;
            return run_node_condition_loop(*condition);
        };
    };
    return mode;
}

AgentMode gang_gate_mode() {
    AgentMode mode;
    mode.name = "gang-gate";
    mode.summary =
        "init container of a gang gate: a session with the gate's controller, then wait for this "
        "pod's verdict and exit by it";
    mode.session_options = true;
    mode.legacy_flags = {{"--gate-verdict", false}};
    mode.add = [](CLI::App& cmd) {
        struct State {
            GateOptions gate;
            std::string on_error = "allow";
            std::string termination_log;
        };
        auto st = std::make_shared<State>();
        cmd.add_option("--gate-verdict", st->gate.verdict_file,
                       "the pod's verdict file (projected from the gate's ConfigMap): wait for it "
                       "after the session and exit by it (0 pass, 1 fail, --on-error)")
            ->required();
        cmd.add_option("--gate-timeout", st->gate.timeout_s,
                       "seconds to wait for the verdict after the session")
            ->capture_default_str();
        cmd.add_option("--on-error", st->on_error,
                       "a verdict of error, or none in time: allow (exit 0) or block (exit 4)")
            ->check(CLI::IsMember({"allow", "block"}))
            ->capture_default_str();
        cmd.add_option("--termination-log", st->termination_log,
                       "also write the outcome here (e.g. /dev/termination-log)");
        return [st](AgentModeContext& ctx) {
            if (auto rc = ctx.prepare_session()) {
                return *rc;
            }
            st->gate.on_error = st->on_error == "block" ? OnError::block : OnError::allow;
            const int session_rc = run_agent(ctx.session);
            return wait_for_gate_verdict(st->gate, ctx.session.node, session_rc,
                                         st->termination_log);
        };
    };
    return mode;
}

}  // namespace

std::vector<AgentMode> k8s_agent_modes() {
    return {node_condition_mode(), gang_gate_mode()};
}

}  // namespace preflight::agent
