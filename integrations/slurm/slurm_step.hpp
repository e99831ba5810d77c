// The srun steps that `--launcher slurm` runs, planned without running anything, so that
// `--dry-run` prints exactly what start() starts. launch.slurm.step `single` (the default): one
// step for all nodes that share a controller address (normally all of them),
//   srun --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=<hostlist> --kill-on-bad-exit=0
//        --no-kill --cpu-bind=none --label --export=ALL (--overlap | --immediate=S ...)
//        [--gres=gpu:G | --gpus-per-node=G] [--mpi=pmix] [extra_args] AGENT --controller ADDR ...
// whose agents take their node name from $SLURMD_NODENAME and derive their node key from the run
// secret in the step's environment; `per-node`: one such srun per node with `--node NAME` and only
// that node's key. Nodes Slurm will not run a task on (down, drained outside our allocation, not
// responding, unknown) are left out with Slurm's state and reason, so that one bad node does not
// keep the step from starting.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/launch/launcher.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::controller {

struct SlurmLaunchOptions {
    std::string srun = "srun";
    std::string scontrol = "scontrol";  // reads node states, GPUs and the job's GRES before start
    std::string partition;              // outside an allocation only
    std::string reservation;            // outside an allocation only (certify uses its own)
    double immediate_s = 30;     // outside an allocation: give up when no resources within this
    bool in_allocation = false;  // set from $SLURM_JOB_ID by from_environment()
    std::string job_id;          // the allocation's job id ($SLURM_JOB_ID), when in_allocation
    std::string job_name = "preflight-agent";
    // A node that is only NOT_RESPONDING (just resumed: Slurm marks it so until its next ping) is
    // read again for up to this long before it is left out.
    double not_responding_grace_s = 5;

    // in_allocation and job_id from $SLURM_JOB_ID unless a partition or reservation is named.
    void from_environment();
};

// What Slurm said about the nodes right before a launch; a dry run has none.
struct SlurmFacts {
    bool states_known = false;  // false: scontrol could not be read; nothing is left out
    std::map<std::string, outcome::SlurmNodeInfo> nodes;  // by name; absent: unknown to Slurm
    std::optional<std::map<std::string, int>> job_gpus;   // in an allocation: GPUs held per node
    std::string job_gpus_error;                           // why job_gpus is missing
};

struct SlurmStep {
    std::vector<std::string> nodes;  // in the order given
    std::string dial;                // the controller address its agents dial
    int gpus_per_node = 0;           // GPUs per node it requests (launch.slurm.gres: its count)
    std::vector<std::string> argv;   // srun ... AGENT ...
};

struct SlurmStepPlan {
    std::vector<SlurmStep> steps;
    std::map<std::string, std::string> left_out;  // node -> why no agent is started there
    std::vector<std::string> notes;               // for the operator (logged as warnings)
};

// The steps for nodes (each with an entry in ctx.dial_address). facts == nullptr (--dry-run):
// nothing is left out and an `auto` GPU count that needs Slurm says where it will come from.
SlurmStepPlan plan_slurm_steps(const std::vector<core::Node>& nodes, const LaunchContext& ctx,
                               const SlurmLaunchOptions& options, const SlurmFacts* facts);

// Why Slurm will not start a task on node now ("" when it will): DOWN, FUTURE, UNKNOWN or INVAL,
// FAIL, NOT_RESPONDING, or DRAIN outside an allocation (inside one, a draining node still runs
// the job's steps). The text names the state and Slurm's reason.
std::string unlaunchable(const outcome::SlurmNodeInfo& node, bool in_allocation);

// True when NOT_RESPONDING is the only thing unlaunchable() holds against node.
bool only_not_responding(const outcome::SlurmNodeInfo& node, bool in_allocation);

// The nodes a line of srun's output says a task ended badly on, with the line, for: "srun: error:
// NODES: task(s) N: Exited with exit code C" (or Killed, Terminated...; NODES is a hostlist when
// several nodes ended alike), "srun: error: Node failure on NODE", "srun: error: Task launch for
// StepId=J.S failed on node NODE: ...".
struct SrunNodeError {
    std::vector<std::string> nodes;
    std::string line;
};
std::optional<SrunNodeError> parse_srun_node_error(std::string_view line);

// A variable of the environment Slurm gives a job (SLURM_JOB_ID, SLURM_JOB_NODELIST...); "" when
// unset.
std::string slurm_env(const char* name);

}  // namespace preflight::controller
