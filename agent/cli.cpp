#include "agent/cli.hpp"

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "agent/gang_gate.hpp"
#include "agent/k8s_condition.hpp"
#include "agent/mpi_bootstrap.hpp"
#include "agent/node_key.hpp"
#include "agent/session.hpp"
#include "agent/standalone.hpp"
#include "agent/stop_signal.hpp"
#include "agent/tls_options.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/exit_code.hpp"
#include "core/inventory.hpp"
#include "core/log.hpp"
#include "plugins/runtime_versions.hpp"

namespace preflight::agent {

int agent_main(int argc, char** argv) {
    if (wants_bootstrap(argc, argv)) {
        return mpi_bootstrap_main(argc, argv);  // mpirun/srun: rank 0 hosts the controller
    }
    CLI::App app{"preflight-agent: runs preflight checks on this node for a controller"};
    app.footer(std::string(core::k_exit_code_help) + std::string(k_agent_exit_code_help));
    app.set_version_flag(
        "--version", [] { return plugins::version_report(); },
        "print the version, the protocol and the GPU and MPI libraries found");
    AgentOptions options;
    std::string controller;
    std::string key_file;
    std::string log_level = "info";
    bool log_json = false;
    app.add_option("--controller", controller, "controller HOST:PORT to dial");
    app.add_option("--node", options.node,
                   "this node's name in the inventory (default: $SLURMD_NODENAME under srun)");
    // Standalone mode (Slurm Prolog): node-local checks without a controller; agent/standalone.hpp.
    StandaloneOptions standalone;
    bool is_standalone = false;
    app.add_flag("--standalone", is_standalone, "run node-local checks without a controller");
    app.add_option("--profile", standalone.profile,
                   "standalone profile: prolog (also the Kubernetes gate), epilog, or health "
                   "(slurm.conf HealthCheckProgram; slurm/health.md)")
        ->check(CLI::IsMember({"prolog", "epilog", "health"}))
        ->capture_default_str();
    app.add_option("--resume-after", standalone.resume_after,
                   "standalone --profile health --drain: resume a node this health check drained "
                   "after this many consecutive passes")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app.add_option("--state-dir", standalone.state_dir,
                   "standalone: directory of the health check's pass count (health-NODE.json) "
                   "and the prolog's memory (prolog-NODE.json: --cache-ttl, --plan-budget)")
        ->capture_default_str();
    app.add_option("--cache-ttl", standalone.cache_ttl_s,
                   "standalone prolog/epilog: reuse this node's last pass when younger than S "
                   "seconds and its fingerprint and the configuration are unchanged (0: never)")
        ->check(CLI::Range(0.0, 30.0 * 86400.0));
    app.add_flag("--plan-budget", standalone.plan_budget,
                 "standalone prolog/epilog: run only the checks whose expected time fits "
                 "--budget-s, most valuable first (learned from --ledger or the state dir); the "
                 "outcome lists what was left out");
    app.add_option("--ledger", standalone.ledger,
                   "standalone prolog/epilog: record the results in this ledger (sqlite:PATH or "
                   "postgresql://...); never changes the verdict");
    app.add_option("--config", standalone.config, "standalone: run configuration (e.g. a SKU file)")
        ->check(CLI::ExistingFile);
    app.add_option("--baseline", standalone.baseline, "standalone: report.json of the last run");
    app.add_option("--budget-s", standalone.budget_s, "standalone: time budget for all checks")
        ->capture_default_str();
    app.add_option("--outcome", standalone.outcome_path, "standalone: write the outcome JSON here");
    app.add_flag("--drain", standalone.drain,
                 "standalone: on failure drain this node (scontrol); --profile health: also "
                 "resume its own drain after --resume-after passes");
    app.add_option("--scontrol", standalone.scontrol, "standalone: scontrol path");
    app.add_option("--max-action-fraction", standalone.max_action_fraction,
                   "standalone --drain: circuit breaker, share of the partition that may be "
                   "drained by preflight (default: the config's actions.max_action_fraction)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--max-actions", standalone.max_actions,
                   "standalone --drain: circuit breaker, absolute cap on nodes drained by "
                   "preflight (default: the config's actions.max_actions; 0: none)")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--force", standalone.force,
                 "standalone --drain: drain even when the circuit breaker refuses (logged)");
    std::string on_error = "allow";  // Kubernetes init-container gate options (docs/kubernetes.md)
    app.add_option("--on-error", on_error,
                   "standalone: a check that errors, overruns the budget or only warns: allow "
                   "(exit 0) or block (exit 4 for errors, 5 for warnings)")
        ->check(CLI::IsMember({"allow", "block"}))
        ->capture_default_str();
    app.add_option("--termination-log", standalone.termination_log,
                   "standalone: also write the outcome here (e.g. /dev/termination-log)");
    // Kubernetes DaemonSet mode (agent/k8s_condition.hpp): the standalone checks every interval,
    // their outcome as the Node's PreflightHealthy condition through nodes/status.
    NodeConditionLoopOptions condition;
    bool k8s_condition = false;
    app.add_flag("--k8s-node-condition", k8s_condition,
                 "standalone: run the checks every --interval and set the Node's condition");
    app.add_option("--interval", condition.interval_s,
                   "--k8s-node-condition: seconds between check runs")
        ->capture_default_str();
    app.add_flag("--once", condition.once, "--k8s-node-condition: one check run, then exit");
    app.add_option("--condition-type", condition.condition_type,
                   "--k8s-node-condition: the NodeCondition type")
        ->capture_default_str();
    app.add_option("--kubeconfig", condition.kubeconfig,
                   "--k8s-node-condition: kubeconfig (default: $KUBECONFIG, else in-cluster)");
    // The gang gate (agent/gang_gate.hpp): after the controller's run, this pod's verdict.
    GateOptions gate;
    app.add_option("--gate-verdict", gate.verdict_file,
                   "with --controller: then wait for this file (the pod's verdict, projected "
                   "from the gate's ConfigMap) and exit by it (0 pass, 1 fail, --on-error)");
    app.add_option("--gate-timeout", gate.timeout_s,
                   "--gate-verdict: seconds to wait for the verdict after the run")
        ->capture_default_str();
    app.add_option("--key-file", key_file,
                   "file holding this node's key (mode 600, owned by this user; "
                   "`preflight keys derive` makes it)");
    bool key_stdin = false;
    app.add_flag("--key-stdin", key_stdin,
                 "read this node's key from the first line of stdin (the ssh launcher sends it)")
        ->excludes("--key-file");
    std::string exec_allow;
    app.add_option("--exec-allow", exec_allow,
                   std::string("programs checks may start (absolute paths, one per line); "
                               "default: ") +
                       plugins::k_default_exec_allow_file +
                       " when it exists, else only nccl-tests binaries by name and no launcher");
    add_tls_options(app, options);
    app.add_option("--sysfs-root", options.sysfs_root, "root for /sys and /proc readers")
        ->capture_default_str();
    app.add_option("--connect-timeout", options.connect_timeout_s, "seconds to keep dialing")
        ->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off");
    app.add_flag("--log-json", log_json, "log as JSON lines");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : core::to_int(core::ExitCode::usage);
    }
    // Before the log is set up, so that its lines name the node also under one srun step for all
    // nodes, where --node is left out (controller/launch/slurm_step.hpp).
    if (options.node.empty()) {
        const char* slurm_node = std::getenv("SLURMD_NODENAME");
        options.node = slurm_node != nullptr ? slurm_node : "";
    }
    if (auto st =
            core::init_logging(log_level, log_json ? core::LogFormat::json : core::LogFormat::text,
                               "agent:" + options.node);
        !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::check_duration_s(options.connect_timeout_s, "--connect-timeout"); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    // Before any check runs: a stopped agent stops its checks' programs (agent/stop_signal.hpp).
    if (auto st = install_stop_signals(); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    if (exec_allow.empty() && ::access(plugins::k_default_exec_allow_file, F_OK) == 0) {
        exec_allow = plugins::k_default_exec_allow_file;
    }
    if (!exec_allow.empty()) {
        auto policy = plugins::ExecPolicy::load(exec_allow);
        if (!policy) {
            std::fprintf(stderr, "preflight-agent: %s\n", policy.error().message.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        options.exec_policy = std::move(policy.value());
    }
    if (k8s_condition && !is_standalone) {
        std::fprintf(stderr,
                     "preflight-agent: --k8s-node-condition runs the --standalone checks; "
                     "give --standalone\n");
        return core::to_int(core::ExitCode::usage);
    }
    if (!gate.verdict_file.empty() && is_standalone) {
        std::fprintf(stderr,
                     "preflight-agent: --gate-verdict is for a --controller run (the gang "
                     "gate); a --standalone gate judges by itself\n");
        return core::to_int(core::ExitCode::usage);
    }
    if (is_standalone) {
        standalone.node = options.node;
        standalone.exec_policy = options.exec_policy;
        standalone.sysfs_root = options.sysfs_root;
        standalone.on_error = on_error == "block" ? OnError::block : OnError::allow;
        if (!standalone.node.empty() && !core::valid_node_name(standalone.node)) {
            std::fprintf(stderr, "preflight-agent: invalid node name '%s'\n",
                         standalone.node.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        if (k8s_condition) {
            condition.node = standalone.node;
            condition.run_timeout_s = standalone.budget_s + 30.0;
            condition.check_argv.assign(argv, argv + argc);
            return run_node_condition_loop(condition);
        }
        core::SystemCommandRunner runner;
        return run_standalone(standalone, runner);
    }
    if (controller.empty() || options.node.empty()) {
        std::fprintf(stderr,
                     "preflight-agent: give --controller HOST:PORT and --node NAME (or "
                     "--standalone)\n");
        return core::to_int(core::ExitCode::usage);
    }
    if (!core::valid_node_name(options.node)) {
        std::fprintf(stderr, "preflight-agent: invalid node name '%s'\n", options.node.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    auto colon = controller.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == controller.size()) {
        std::fprintf(stderr, "preflight-agent: --controller wants HOST:PORT, got '%s'\n",
                     controller.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    options.controller_host = controller.substr(0, colon);
    // The whole rest must be a port: "12abc", "0" and "70000" are refused, not read as 12.
    const std::string port = controller.substr(colon + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
        std::fprintf(stderr, "preflight-agent: bad port in '%s' (1-65535)\n", controller.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    options.controller_port = value;
    auto key = load_node_key(key_file, options.node, key_stdin);
    if (!key) {
        std::fprintf(stderr, "preflight-agent: %s\n", key.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    options.node_key = key.value();
    // Collective transports write to sockets whose peer may vanish; that is an error result for
    // the check, not a reason for the agent to die.
    ::signal(SIGPIPE, SIG_IGN);
    if (!gate.verdict_file.empty()) {
        gate.on_error = on_error == "block" ? OnError::block : OnError::allow;
        const int session_rc = run_agent(options);
        return wait_for_gate_verdict(gate, options.node, session_rc, standalone.termination_log);
    }
    return run_agent(options);
}

}  // namespace preflight::agent
