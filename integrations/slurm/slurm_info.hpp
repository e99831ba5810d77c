// What Slurm says before a launch: node records from `scontrol show node --json` (Slurm 23.02 and
// later) or, where scontrol has no --json (22.05: "unrecognized option"), from its `-o` text; the
// GPUs in a Gres string; the GPUs a job holds on each node (`scontrol show job -d`); settings from
// `scontrol show config` and the prolog's time budget judged against them. The parsers are pure
// and tested on saved outputs of the real tools (tests/fixtures/slurm/README.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::outcome {

// Node objects of Slurm's data_parser: `scontrol show node --json` (state an array, "IDLE" then
// flags such as "DRAIN") and `sinfo --json` of 22.05 (state "idle" plus "state_flags"), both a
// "nodes" array; and `sinfo --json` of 23.02 and later (tests/fixtures/slurm/24.11, 26.05), a
// "sinfo" array of records, each with its node names (nodes.nodes), node.state, reason.description,
// comment, gres.total and partition.name, one node in several records (partitions) merged. State
// is joined as the text form writes it ("IDLE+DRAIN"); reason, comment, address, partitions and
// gres are taken as given (Slurm keeps the " [user@time]" of the text form in separate fields).
// Error when text is not JSON with a "nodes" or "sinfo" array; a node without a name is skipped.
core::Result<std::vector<SlurmNodeInfo>> parse_slurm_nodes_json(std::string_view text);

// GPUs in a Gres string: the sum of the counts of its gpu entries, e.g. "gpu:8" 8,
// "gpu:h100:8(S:0-1)" 8, "gpu:a100:2,gpu:v100:1" 3, "gpu" 1, "nic:1" or "" 0. TRES forms count
// too: a job's or step's TresPerNode, "gres:gpu:2" in 22.05 and "gres/gpu:2" in 24.11 and later.
int gres_gpu_count(std::string_view gres);

// Per node, the GPUs a job holds, from `scontrol show job -d`: each "Nodes=<hostlist> ...
// GRES=<gres>" line gives its nodes gres_gpu_count of that GRES (0 when "GRES=" is empty).
std::map<std::string, int> parse_job_node_gpus(std::string_view text);

// `scontrol show config`: "Key = value" lines to a map (the first line, "Configuration data as of
// ...", and lines without " = " are skipped). An indexed entry keeps its index ("Prolog[0]").
std::map<std::string, std::string> parse_scontrol_config(std::string_view text);

// The programs of a list setting (Prolog, Epilog, PrologSlurmctld, EpilogSlurmctld) in a
// parse_scontrol_config map. 22.05 prints one line, "(null)" when unset; 24.11 and later print
// one indexed line per program ("Prolog[0] = /a", "Prolog[1] = /b") and none when unset. Empty
// when unset, whichever way it was said.
std::vector<std::string> slurm_config_list(const std::map<std::string, std::string>& config,
                                           const std::string& key);

// A time setting of `scontrol show config` in seconds: "10 sec" 10, "60" 60, "2 min" 120; +inf for
// no limit ("UNLIMITED", "INFINITE", and 65534/65535, the NO_VAL16/INFINITE16 that 22.05 prints for
// an unset PrologEpilogTimeout: "the default behavior is to wait indefinitely", slurm.conf(5)).
// Error for anything else.
core::Result<double> slurm_seconds(std::string_view value);

// Warnings for a prolog that may run budget_s seconds (preflight's slurm/prolog.sh: the agent's
// budget, then `timeout` budget + 5 s and SIGKILL 2 s later, so budget + 7 s at worst) against the
// cluster's settings (slurm.conf(5) of 22.05): PrologEpilogTimeout below it kills the prolog and
// drains the node; BatchStartTimeout below it may make slurmctld give up on the batch launch
// ("Larger values may be required if more time is required to execute the Prolog"). Empty when
// none.
std::vector<std::string> prolog_budget_warnings(double budget_s,
                                                const std::map<std::string, std::string>& config);
constexpr double k_prolog_overhead_s = 7.0;  // prolog.sh: timeout budget + 5, kill 2 s later

// The named nodes from `scontrol show node --json HOSTLIST`, or from client.nodes() (the `-o`
// text) when that is not JSON (Slurm before 23.02). Unknown names are absent. `used_json`, when
// given, says which was read.
core::Result<std::map<std::string, SlurmNodeInfo>> read_node_states(
    const SlurmClient& client, const std::vector<std::string>& names, bool* used_json = nullptr);

// parse_job_node_gpus of `scontrol show job -d JOB`.
core::Result<std::map<std::string, int>> read_job_node_gpus(const SlurmClient& client,
                                                            const std::string& job_id);

// parse_scontrol_config of `scontrol show config`.
core::Result<std::map<std::string, std::string>> read_slurm_config(const SlurmClient& client);

}  // namespace preflight::outcome
