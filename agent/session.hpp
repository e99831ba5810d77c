// The agent's session with its controller: dial with retries and backoff, answer the HMAC
// challenge, then run the checks the controller asks for, one at a time and off the I/O thread,
// with heartbeats both ways and the rendezvous store served by the controller.
#pragma once

#include "core/exit_code.hpp"

#include <string>

namespace preflight::agent {

struct AgentOptions {
    std::string controller_host;
    int controller_port = 0;
    std::string node;
    std::string token;
    std::string sysfs_root = "/";
    double connect_timeout_s = 60.0;  // give up dialing after this
    std::string tls_ca;               // non-empty: TLS, trusting only this CA file
    std::string tls_server_name;      // name the certificate must carry; empty: controller_host
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

int run_agent(const AgentOptions& options);

}  // namespace preflight::agent
