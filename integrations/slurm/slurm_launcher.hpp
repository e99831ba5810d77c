// `--launcher slurm`: the preflight agents as srun job steps (slurm_step.hpp plans them). Before
// starting, it reads from Slurm the nodes' states and reasons (`scontrol --json show node`, else
// the text form) and leaves out, as `error` with Slurm's state and reason, nodes Slurm will not run
// a task on; and, for an `auto` GPU request, the GPUs each node has (Gres) or, inside an
// allocation, holds for the job. launch.slurm.step `single` (default): one srun per controller
// address (normally one for the run), its output with --label in <log_dir>/step-<k>.log; the run
// secret goes in its environment. `per-node`: one srun per node, output in <log_dir>/<node>.log,
// each with only its node's key. Inside an allocation ($SLURM_JOB_ID set) a step is --overlap;
// outside one it makes its own job that must start within --immediate seconds, optionally in a
// partition or reservation.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/launch/launcher.hpp"
#include "integrations/slurm/slurm_sink.hpp"
#include "integrations/slurm/slurm_step.hpp"

namespace preflight::controller {

class SlurmLauncher final : public Launcher {
  public:
    // scontrol_runner: runs scontrol (a fake in unit tests); nullptr: the real programs.
    explicit SlurmLauncher(SlurmLaunchOptions options,
                           std::shared_ptr<core::CommandRunner> scontrol_runner = nullptr);
    std::string name() const override { return "slurm"; }
    const SlurmLaunchOptions& options() const { return m_options; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    std::map<std::string, std::string> exited() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    // What Slurm says about nodes now (states with a grace for NOT_RESPONDING, the job's GPUs).
    SlurmFacts read_facts(const std::vector<core::Node>& nodes, const LaunchContext& ctx) const;

  private:
    struct Running {
        std::string name;                // "step-1", or the node in per-node mode
        std::vector<std::string> nodes;  // its nodes
        core::ChildProcess child;
        std::string log;
        std::size_t read_to = 0;                   // bytes of the log already scanned
        std::string partial;                       // a line not yet ended
        std::string last_srun;                     // srun's last own message
        std::map<std::string, std::string> ended;  // node -> srun's line about its task
    };
    void scan_log(Running& step);

    SlurmLaunchOptions m_options;
    std::shared_ptr<core::CommandRunner> m_runner;
    std::vector<Running> m_steps;
};

// Fills each node's address, where the inventory gave none, from Slurm's NodeAddr (resolved to
// IPv4 when it is a host name), so that the controller advertises an address the node can reach.
// Nodes Slurm does not know are returned with the reason.
std::map<std::string, std::string> fill_slurm_addresses(std::vector<core::Node>& nodes,
                                                        const outcome::SlurmClient& client);

// The node list of the allocation we run in ($SLURM_JOB_NODELIST, else $SLURM_NODELIST); ""
// outside.
std::string allocation_nodelist();

// `--launcher slurm` for a run's LauncherTable: a SlurmLauncher with *options as they are when the
// run makes it.
LauncherEntry slurm_launcher_entry(std::shared_ptr<const SlurmLaunchOptions> options);

}  // namespace preflight::controller
