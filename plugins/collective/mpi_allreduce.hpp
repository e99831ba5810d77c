// collective.mpi_allreduce: MPI_Allreduce (float32 sum, in place) across the controller's group,
// for agents started under mpirun/srun with `--bootstrap mpi`: the group's node names map to
// world ranks and MPI_Comm_create_group (collective over the group only) builds its communicator.
// Warm-up, barrier-aligned timed iterations, every element verified, slowest rank's mean time,
// busBW = algBW x 2(n-1)/n as for NCCL. Skip when the agent was not bootstrapped through MPI.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class MpiAllreduceCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "collective.mpi_allreduce";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    MpiAllreduceCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
