// What a connected agent is told on its command line, and the exit codes of its process.
#pragma once

#include <string>

#include "core/exit_code.hpp"
#include "plugins/exec_policy.hpp"

namespace preflight::agent {

struct AgentOptions {
    std::string controller_host;
    int controller_port = 0;
    std::string node;
    std::string node_key;  // this node's own key (core/keys.hpp)
    std::string sysfs_root = "/";
    double connect_timeout_s = 60.0;  // give up dialing after this
    std::string tls_ca;               // non-empty: TLS, trusting only this CA file
    std::string tls_server_name;      // name the certificate must carry; empty: controller_host
    plugins::ExecPolicy exec_policy = plugins::ExecPolicy::defaults();  // what checks may start
};

// Exit codes of the agent process, from the one table (core/exit_code.hpp): an agent that could
// not do its work (lost or never reached its controller, refused by it) ended in a run error,
// which says nothing about the node.
inline constexpr int k_agent_ok = core::to_int(core::ExitCode::ok);  // controller said shutdown
inline constexpr int k_agent_failed = core::to_int(core::ExitCode::run_error);  // lost/unreached
inline constexpr int k_agent_usage = core::to_int(core::ExitCode::usage);       // bad options
inline constexpr int k_agent_rejected =
    core::to_int(core::ExitCode::run_error);  // authentication refused (either way, TLS included)
// Stopped by SIGTERM, SIGINT or SIGHUP: the running check was not judged (agent/stop_signal.hpp).
inline constexpr int k_agent_interrupted = core::to_int(core::ExitCode::inconclusive);

}  // namespace preflight::agent
