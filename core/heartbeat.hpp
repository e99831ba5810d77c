// The heartbeat rule both ends of a session follow (controller:
// controller/net/agent_hub_limits.cpp; agent: agent/session.cpp; and the scale harness, which plays
// agents). Any frame is a sign of life and a peer gives up after 3 silent intervals, so a peer that
// was sent a frame in the last half interval needs no heartbeat: the longest silence is then 1.5
// intervals. At 16 384 agents this skips a sealed frame per agent per interval while steps are
// being dispatched.
#pragma once

#include <chrono>

namespace preflight::core {

inline bool heartbeat_due(std::chrono::steady_clock::time_point last_sent,
                          std::chrono::steady_clock::time_point now,
                          std::chrono::duration<double> interval) {
    return now - last_sent >= interval / 2;
}

}  // namespace preflight::core
