#include "agent/app/cli_options.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "agent/node_key.hpp"
#include "agent/stop_signal.hpp"
#include "agent/tls_options.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/exit_code.hpp"
#include "core/inventory.hpp"
#include "core/log.hpp"

namespace preflight::agent {

namespace {

int usage(const std::string& message) {
    std::fprintf(stderr, "preflight-agent: %s\n", message.c_str());
    return core::to_int(core::ExitCode::usage);
}

}  // namespace

void add_common_options(CLI::App& cmd, CommonArgs& common, AgentOptions& options) {
    cmd.add_option("--node", options.node,
                   "this node's name in the inventory (default: $SLURMD_NODENAME under srun, "
                   "else the host name for standalone runs)");
    cmd.add_option("--exec-allow", common.exec_allow,
                   std::string("programs checks may start (absolute paths, one per line); "
                               "default: ") +
                       plugins::k_default_exec_allow_file +
                       " when it exists, else only nccl-tests binaries by name and no launcher");
    cmd.add_option("--sysfs-root", options.sysfs_root, "root for /sys and /proc readers")
        ->capture_default_str();
    cmd.add_option("--log-level", common.log_level, "trace, debug, info, warn, error, off");
    cmd.add_flag("--log-json", common.log_json, "log as JSON lines");
}

void add_session_options(CLI::App& cmd, SessionArgs& session, AgentOptions& options) {
    cmd.add_option("--controller", session.controller, "controller HOST:PORT to dial");
    cmd.add_option("--key-file", session.key_file,
                   "file holding this node's key (mode 600, owned by this user; "
                   "`preflight keys derive` makes it)");
    cmd.add_flag("--key-stdin", session.key_stdin,
                 "read this node's key from the first line of stdin (the ssh launcher sends it)")
        ->excludes("--key-file");
    add_tls_options(cmd, options);
    cmd.add_option("--connect-timeout", options.connect_timeout_s, "seconds to keep dialing")
        ->capture_default_str();
}

void add_standalone_options(CLI::App& cmd, StandaloneOptions& s, StandaloneArgs& args) {
    cmd.add_option("--profile", s.profile,
                   "prolog (also the Kubernetes gate), epilog, or health (slurm.conf "
                   "HealthCheckProgram; slurm/health.md)")
        ->check(CLI::IsMember({"prolog", "epilog", "health"}))
        ->capture_default_str();
    cmd.add_option("--resume-after", s.resume_after,
                   "--profile health --drain: resume a node this health check drained after this "
                   "many consecutive passes")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd.add_option("--state-dir", s.state_dir,
                   "directory of the health check's pass count (health-NODE.json) and the "
                   "prolog's memory (prolog-NODE.json: --cache-ttl, --plan-budget)")
        ->capture_default_str();
    cmd.add_option("--cache-ttl", s.cache_ttl_s,
                   "prolog/epilog: reuse this node's last pass when younger than S seconds and "
                   "its fingerprint and the configuration are unchanged (0: never)")
        ->check(CLI::Range(0.0, 30.0 * 86400.0));
    cmd.add_flag("--plan-budget", s.plan_budget,
                 "prolog/epilog: run only the checks whose expected time fits --budget-s, most "
                 "valuable first (learned from --ledger or the state dir); the outcome lists "
                 "what was left out");
    cmd.add_option("--ledger", s.ledger,
                   "prolog/epilog: record the results in this ledger (sqlite:PATH or "
                   "postgresql://...); never changes the verdict");
    cmd.add_option("--config", s.config, "run configuration (e.g. a SKU file)")
        ->check(CLI::ExistingFile);
    cmd.add_option("--baseline", s.baseline, "report.json of the last run");
    cmd.add_option("--budget-s", s.budget_s, "time budget for all checks")->capture_default_str();
    cmd.add_option("--outcome", s.outcome_path, "write the outcome JSON here");
    cmd.add_flag("--drain", s.drain,
                 "on failure drain this node (scontrol); --profile health: also resume its own "
                 "drain after --resume-after passes");
    cmd.add_option("--scontrol", s.scontrol, "scontrol path");
    cmd.add_option("--max-action-fraction", s.max_action_fraction,
                   "--drain: circuit breaker, share of the partition that may be drained by "
                   "preflight (default: the config's actions.max_action_fraction)")
        ->check(CLI::Range(0.0, 1.0));
    cmd.add_option("--max-actions", s.max_actions,
                   "--drain: circuit breaker, absolute cap on nodes drained by preflight "
                   "(default: the config's actions.max_actions; 0: none)")
        ->check(CLI::NonNegativeNumber);
    cmd.add_flag("--force", s.force,
                 "--drain: drain even when the circuit breaker refuses (logged)");
    cmd.add_option("--on-error", args.on_error,
                   "a check that errors, overruns the budget or only warns: allow (exit 0) or "
                   "block (exit 4 for errors, 5 for warnings)")
        ->check(CLI::IsMember({"allow", "block"}))
        ->capture_default_str();
    cmd.add_option("--termination-log", s.termination_log,
                   "also write the outcome here (e.g. /dev/termination-log)");
}

std::optional<int> set_up(const CommonArgs& common, AgentOptions& options) {
    // Before the log is set up, so that its lines name the node also under one srun step for all
    // nodes, where --node is left out (integrations/slurm/slurm_step.hpp).
    if (options.node.empty()) {
        const char* slurm_node = std::getenv("SLURMD_NODENAME");
        options.node = slurm_node != nullptr ? slurm_node : "";
    }
    if (auto st = core::init_logging(
            common.log_level, common.log_json ? core::LogFormat::json : core::LogFormat::text,
            "agent:" + options.node);
        !st) {
        return usage(st.error().message);
    }
    if (auto st = core::check_duration_s(options.connect_timeout_s, "--connect-timeout"); !st) {
        return usage(st.error().message);
    }
    // Before any check runs: a stopped agent stops its checks' programs (agent/stop_signal.hpp).
    if (auto st = install_stop_signals(); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    std::string exec_allow = common.exec_allow;
    if (exec_allow.empty() && ::access(plugins::k_default_exec_allow_file, F_OK) == 0) {
        exec_allow = plugins::k_default_exec_allow_file;
    }
    if (!exec_allow.empty()) {
        auto policy = plugins::ExecPolicy::load(exec_allow);
        if (!policy) {
            return usage(policy.error().message);
        }
        options.exec_policy = std::move(policy.value());
    }
    return std::nullopt;
}

std::optional<int> prepare_session(const SessionArgs& session, AgentOptions& options) {
    if (session.controller.empty() || options.node.empty()) {
        return usage(
            "give --controller HOST:PORT and --node NAME (or run the standalone checks: "
            "`preflight-agent standalone`)");
    }
    if (!core::valid_node_name(options.node)) {
        return usage("invalid node name '" + options.node + "'");
    }
    const auto& controller = session.controller;
    auto colon = controller.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == controller.size()) {
        return usage("--controller wants HOST:PORT, got '" + controller + "'");
    }
    options.controller_host = controller.substr(0, colon);
    // The whole rest must be a port: "12abc", "0" and "70000" are refused, not read as 12.
    const std::string port = controller.substr(colon + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535) {
        return usage("bad port in '" + controller + "' (1-65535)");
    }
    options.controller_port = value;
    auto key = load_node_key(session.key_file, options.node, session.key_stdin);
    if (!key) {
        return usage(key.error().message);
    }
    options.node_key = key.value();
    return std::nullopt;
}

std::optional<int> prepare_standalone(const StandaloneArgs& args, const AgentOptions& options,
                                      StandaloneOptions& standalone) {
    standalone.node = options.node;
    standalone.exec_policy = options.exec_policy;
    standalone.sysfs_root = options.sysfs_root;
    standalone.on_error = args.on_error == "block" ? OnError::block : OnError::allow;
    if (!standalone.node.empty() && !core::valid_node_name(standalone.node)) {
        return usage("invalid node name '" + standalone.node + "'");
    }
    return std::nullopt;
}

}  // namespace preflight::agent
