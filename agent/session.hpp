// The agent's session with its controller: dial with retries and backoff, answer the HMAC
// challenge and make the controller prove it holds this node's key, then run the checks the
// controller asks for, one at a time and off the I/O thread, with heartbeats both ways and the
// rendezvous store served by the controller.
#pragma once

#include "agent/agent_options.hpp"

namespace preflight::agent {

int run_agent(const AgentOptions& options);

}  // namespace preflight::agent
