// `--launcher slurm`: one preflight agent per node through `srun`, one srun per node so that one
// node's failure (a prolog that drains it, a crash, a hang) costs only that node. Inside an
// allocation ($SLURM_JOB_ID set) each srun is a job step (--overlap); outside one each is its own
// one-node job, optionally in a partition or reservation, that must start within --immediate
// seconds. Each srun's output (the agent's log, forwarded by Slurm) goes to <log_dir>/<node>.log.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/launch/launcher.hpp"
#include "outcome/slurm_sink.hpp"

namespace preflight::controller {

struct SlurmLaunchOptions {
    std::string srun = "srun";
    std::string partition;       // outside an allocation only
    std::string reservation;     // outside an allocation only (certify uses its own)
    double immediate_s = 30;     // outside an allocation: give up when no resources within this
    bool in_allocation = false;  // set from $SLURM_JOB_ID by from_environment()
    std::string job_name = "preflight-agent";

    // in_allocation from $SLURM_JOB_ID unless a partition or reservation is named.
    void from_environment();
};

class SlurmLauncher final : public Launcher {
  public:
    explicit SlurmLauncher(SlurmLaunchOptions options) : m_options(std::move(options)) {}
    std::string name() const override { return "slurm"; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    std::map<std::string, std::string> exited() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    // The srun argv for one node (exposed for tests).
    static std::vector<std::string> srun_argv(const core::Node& node, const LaunchContext& ctx,
                                              const SlurmLaunchOptions& options);

  private:
    SlurmLaunchOptions m_options;
    std::map<std::string, core::ChildProcess> m_children;
    std::map<std::string, std::string> m_log_paths;
};

// Fills each node's address, where the inventory gave none, from Slurm's NodeAddr (resolved to
// IPv4 when it is a host name), so that the controller advertises an address the node can reach.
// Nodes Slurm does not know are returned with the reason.
std::map<std::string, std::string> fill_slurm_addresses(std::vector<core::Node>& nodes,
                                                        const outcome::SlurmClient& client);

// The node list of the allocation we run in ($SLURM_JOB_NODELIST, else $SLURM_NODELIST); ""
// outside.
std::string allocation_nodelist();

}  // namespace preflight::controller
