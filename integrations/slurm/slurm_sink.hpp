// Slurm through scontrol: reads node state with `scontrol show node -o`, drains with
// slurm_drain_argv (`scontrol update NodeName=<n> State=DRAIN Reason=preflight: <class>
// Comment=preflight: <figures>`), and resumes only nodes whose current reason is ours (starts with
// "preflight:"). A node someone else marked (their reason, or drained/down without one) is never
// drained over and never resumed: overwriting its reason with ours would make a later certify
// resume it. An operator's Comment is never overwritten either. apply_slurm_drain is the one path
// every drain of a failed node takes (controller run, prolog): ownership, then the circuit breaker
// over the nodes already drained by us. Every command runs through a core::CommandRunner with
// argv, never a shell.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"
#include "integrations/slurm/scontrol_argv.hpp"
#include "outcome/breaker.hpp"
#include "outcome/reasons.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

struct SlurmNodeInfo {
    std::string name;
    std::string addr;                     // NodeAddr
    std::string state;                    // e.g. "IDLE+DRAIN", "ALLOCATED", "DOWN+NOT_RESPONDING"
    std::string reason;                   // without Slurm's " [user@time]" suffix; empty when none
    std::string comment;                  // Comment=, empty when none
    std::vector<std::string> partitions;  // Partitions=, comma-separated
    std::string gres;                     // Gres=, e.g. "gpu:8", "gpu:h100:8(S:0-1)"; "" for none
    bool has_flag(std::string_view flag) const;  // "DRAIN", "NOT_RESPONDING", ...
    bool drained() const { return has_flag("DRAIN"); }
    bool down() const { return state.rfind("DOWN", 0) == 0; }
    // Out of service: drained or draining, DOWN, or FAIL (also spelt DRAINED, DRAINING, FAILING).
    // Only then does a Reason mark the node: Slurm 23.11 to 25.11 without accounting keep an
    // operator's old Reason on a node they resumed (State=IDLE) until a job runs there.
    bool out_of_service() const;
    // The reason that marks the node: `reason` while out_of_service(), else "".
    std::string marking_reason() const { return out_of_service() ? reason : std::string(); }
};

// Parses `scontrol show node -o` output: one node per line. Reason=, Comment= and Extra= come last,
// in that order, and keep their spaces (Slurm 22.05). Lines that are not node records are ignored.
std::vector<SlurmNodeInfo> parse_scontrol_nodes(std::string_view text);

// Why we may not drain this node ("" when we may): out of service (drained, down or failed) with a
// reason that is not ours or with no reason (someone else's state). Ours: a "preflight:" reason,
// old ones included. A node in service is nobody's, whatever old Reason Slurm still shows for it.
std::string foreign_mark(const SlurmNodeInfo& node);

// True when the node is out of service (drained, down or failed) with our reason.
bool marked_by_us(const SlurmNodeInfo& node);

// The breaker's count for draining `node`: nodes marked by us among those sharing a partition with
// it (the cluster when it has none), counting `node` itself. Pure.
MarkCount slurm_mark_count(const std::vector<SlurmNodeInfo>& all, const std::string& node);

struct SlurmClient {
    core::CommandRunner& runner;
    std::string scontrol = "scontrol";
    std::chrono::milliseconds timeout{30000};

    // The named nodes; nodes Slurm does not know are absent from the map (not an error).
    core::Result<std::map<std::string, SlurmNodeInfo>> nodes(
        const std::vector<std::string>& names) const;
    // Every node Slurm knows (`scontrol show node -o`).
    core::Result<std::vector<SlurmNodeInfo>> all_nodes() const;
    // State=DRAIN with a reason and optional comment (sanitized by the caller). Error names
    // scontrol's message.
    core::Status drain(const std::string& node, const std::string& reason,
                       const std::string& comment = {}) const;
    // State=RESUME only when the node's current reason is ours (clearing the Comment when that is
    // ours too); `why` says what was done. Returns true when resumed.
    bool resume_if_ours(const std::string& node, std::string* why) const;
    // Any scontrol command (args after the program); error carries the first output line.
    core::Result<std::string> run(const std::vector<std::string>& args) const;
    // A full argv whose first element is the program, e.g. a planned action's.
    core::Result<std::string> run_argv(const std::vector<std::string>& argv) const;
};

enum class DrainOutcome {
    drained,     // action.applied
    left_alone,  // someone else's mark (foreign_mark); action.error says whose
    refused,     // the circuit breaker refused; action.error has the counts
    failed,      // scontrol failed or the node is unknown; action.error says why
};

// Carries out one planned slurm drain (apply_actions, the prolog): refuses, without touching the
// node, when foreign_mark says it is someone else's, or when check_breaker over slurm_mark_count
// refuses (logged; --force in the policy overrides it, also logged). An operator's Comment is kept:
// the Comment= argument is dropped then.
DrainOutcome apply_slurm_drain(Action& action, const SlurmClient& client,
                               const BreakerPolicy& policy);

}  // namespace preflight::outcome
