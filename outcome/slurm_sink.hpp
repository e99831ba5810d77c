// Slurm through scontrol: reads node state with `scontrol show node -o`, drains with
// slurm_drain_argv (`scontrol update NodeName=<n> State=DRAIN Reason=preflight: ...`), and resumes
// only nodes whose current reason is ours (starts with "preflight:"). An operator's drain is never
// overwritten and never resumed: overwriting its reason with ours would make a later certify resume
// it. Every command runs through a core::CommandRunner with argv, never a shell.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"
#include "outcome/action_commands.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

struct SlurmNodeInfo {
    std::string name;
    std::string addr;    // NodeAddr
    std::string state;   // e.g. "IDLE+DRAIN", "ALLOCATED", "DOWN+NOT_RESPONDING"
    std::string reason;  // without Slurm's " [user@time]" suffix; empty when none
    bool has_flag(std::string_view flag) const;  // "DRAIN", "NOT_RESPONDING", ...
    bool drained() const { return has_flag("DRAIN"); }
    bool down() const { return state.rfind("DOWN", 0) == 0; }
};

// Parses `scontrol show node -o` output: one node per line; Reason= is the last field and keeps its
// spaces. Lines that are not node records are ignored.
std::vector<SlurmNodeInfo> parse_scontrol_nodes(std::string_view text);

// True when a reason was written by preflight ("preflight:" prefix).
bool reason_is_ours(std::string_view reason);

struct SlurmClient {
    core::CommandRunner& runner;
    std::string scontrol = "scontrol";
    std::chrono::milliseconds timeout{30000};

    // The named nodes; nodes Slurm does not know are absent from the map (not an error).
    core::Result<std::map<std::string, SlurmNodeInfo>> nodes(
        const std::vector<std::string>& names) const;
    // State=DRAIN with a reason (sanitized by the caller). Error names scontrol's message.
    core::Status drain(const std::string& node, const std::string& reason) const;
    // State=RESUME only when the node's current reason is ours; `why` says what was done.
    // Returns true when resumed.
    bool resume_if_ours(const std::string& node, std::string* why) const;
    // Any scontrol command (args after the program); error carries the first output line.
    core::Result<std::string> run(const std::vector<std::string>& args) const;
    // A full argv whose first element is the program, e.g. a planned action's.
    core::Result<std::string> run_argv(const std::vector<std::string>& argv) const;
};

// Carries out one planned slurm drain (used by apply_actions): refuses, without touching the node,
// when the node is already drained or down with a reason that is not ours.
void apply_slurm_drain(Action& action, const SlurmClient& client);

}  // namespace preflight::outcome
