// The steps of `--bootstrap mpi` (mpi_bootstrap.hpp) once its options are parsed: MPI is the
// launcher's rendezvous only. Every rank names its node (allgather); rank 0 hosts the controller
// and broadcasts where it listens; each rank receives only its own node key (scatter); then each
// rank runs as a normal agent, and rank 0 exits with the controller's exit code.
#pragma once

#include <string>

#include "agent/agent_options.hpp"
#include "agent/mpi_controller_host.hpp"

namespace preflight::agent {

struct MpiBootstrapOptions {
    ControllerLaunch controller;  // used on rank 0
    AgentOptions agent;           // node, controller address and key are filled in here
    std::string log_level = "info";
};

// Runs this rank's part of the job and returns its exit code. argc and argv go to MPI_Init.
int run_mpi_bootstrap(MpiBootstrapOptions options, int* argc, char*** argv);

}  // namespace preflight::agent
