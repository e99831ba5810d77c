// Options for a real agent session (agent::run_agent) that dials an in-process controller on
// loopback; shared by the agent hub and TLS session tests.
#pragma once

#include <string>

#include "agent/session.hpp"
#include "core/keys.hpp"

namespace preflight::test_agents {

inline agent::AgentOptions local_agent_options(int port, const std::string& node,
                                               const std::string& secret,
                                               double connect_timeout_s) {
    agent::AgentOptions options;
    options.controller_host = "127.0.0.1";
    options.controller_port = port;
    options.node = node;
    options.node_key = core::derive_node_key(secret, node);  // as the launchers hand it out
    options.connect_timeout_s = connect_timeout_s;
    return options;
}

}  // namespace preflight::test_agents
