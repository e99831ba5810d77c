// Options for a real agent session (agent::run_agent) that dials an in-process controller on
// loopback; shared by the agent hub and TLS session tests.
#pragma once

#include <string>

#include "agent/session.hpp"

namespace preflight::test_agents {

inline agent::AgentOptions local_agent_options(int port, const std::string& node,
                                               const std::string& token, double connect_timeout_s) {
    agent::AgentOptions options;
    options.controller_host = "127.0.0.1";
    options.controller_port = port;
    options.node = node;
    options.token = token;
    options.connect_timeout_s = connect_timeout_s;
    return options;
}

}  // namespace preflight::test_agents
