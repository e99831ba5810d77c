// The MPI world an agent started with `--bootstrap mpi` belongs to: its rank and every rank's node
// name, so collective.mpi_allreduce can turn a controller group (node names) into world ranks.
// Set once by agent/mpi_bootstrap before the agent session starts; unset in every other agent.
#pragma once

#include <string>
#include <vector>

namespace preflight::plugins {

struct MpiWorld {
    int rank = 0;
    std::vector<std::string> nodes;              // node name of each world rank
    int rank_of(const std::string& node) const;  // -1 when absent
};

void set_mpi_world(MpiWorld world);
const MpiWorld* mpi_world();  // nullptr unless bootstrapped through MPI

}  // namespace preflight::plugins
