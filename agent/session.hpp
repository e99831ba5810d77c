// The agent's session with its controller: dial with retries and backoff, answer the HMAC
// challenge, then run the checks the controller asks for, one at a time and off the I/O thread,
// with heartbeats both ways and the rendezvous store served by the controller.
#pragma once

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

// Exit codes of the agent process.
inline constexpr int k_agent_ok = 0;        // controller said shutdown
inline constexpr int k_agent_failed = 1;    // lost the controller or could not reach it
inline constexpr int k_agent_usage = 2;     // bad options (e.g. a --tls-ca that is no CA file)
inline constexpr int k_agent_rejected = 3;  // authentication refused (either way: TLS included)

int run_agent(const AgentOptions& options);

}  // namespace preflight::agent
