// `preflight-agent --standalone --profile health`, for slurm.conf's HealthCheckProgram (slurmd runs
// it as root every HealthCheckInterval and ignores its exit code: the program acts itself;
// slurm/health.md). After the node-local checks:
//  - fail: the pass count goes to 0 and the node is drained through the prolog's path
//    (drain_for_prolog: ownership, circuit breaker), unless this health check drained it already
//    with the same reason; the drain's reason is remembered in the state file;
//  - pass (warnings too: they decide nothing): the count goes up; a node this health check drained
//    is resumed once the count reaches --resume-after, after reading its state and reason again
//    right before `scontrol update State=RESUME`: only while it is still drained with the very
//    reason we drained it with. Someone else's drain, and any other preflight drain (a controller
//    run's "preflight: busbw low", certify's "preflight: uncertified": findings fast node-local
//    checks cannot clear) is never resumed here;
//  - could not judge (a check errored, overran the budget, the agent was stopped): the count goes
//    to 0 and nothing is drained or resumed: doubt is not a failure, and not a pass either.
// The state lives in <state_dir>/health-<node>.json, written atomically; a state file that cannot
// be read, is not JSON or names another node is logged and counted from 0, and the drain it may
// have recorded is then never resumed by this health check. A lock file beside it keeps two runs
// for one node from overlapping (slurmd starts one per interval, whatever the last one is doing).
#pragma once

#include <string>

#include "core/result.hpp"
#include "integrations/slurm/slurm_standalone.hpp"  // lock_health_state, apply_health

namespace preflight::agent {

struct HealthState {
    int consecutive_passes = 0;
    std::string drained_reason;  // the reason this health check drained the node with; "" none
    std::string drained_at;      // when (RFC 3339, UTC)
    std::string last_verdict;
    std::string updated;
};

// <state_dir>/health-<node>.json
std::string health_state_path(const std::string& state_dir, const std::string& node);

// A state file's text for `node`. Error when it is not JSON, not a preflight health state, names
// another node, or holds a field of the wrong type or a drained_reason that is not ours.
core::Result<HealthState> parse_health_state(const std::string& text, const std::string& node);
std::string health_state_text(const HealthState& state, const std::string& node, int resume_after);

enum class HealthResume {
    resumed,
    gone,    // no longer drained with our reason (resumed, redrained or marked by someone else)
    failed,  // could not read or update the node: try again at the next pass
};

// Resumes `node` when, read right now, it is drained (not down) with exactly `reason`. `why` says
// what was found and done.
HealthResume resume_health_drain(const outcome::SlurmClient& client, const std::string& node,
                                 const std::string& reason, std::string* why);

}  // namespace preflight::agent
