// Rank 0's part of `--bootstrap mpi` (mpi_bootstrap.hpp): start `preflight run --launcher
// connect` for the job's nodes with the run's secret in its environment, and wait until it
// listens, so that what the other ranks are told to dial is a controller that is up.
#pragma once

#include <string>
#include <vector>

#include "core/process.hpp"

namespace preflight::agent {

// How rank 0 starts the controller: the command line's options for it.
struct ControllerLaunch {
    std::string controller_bin;  // empty: `preflight` next to this agent
    std::string log_level = "info";
    std::string listen = "0.0.0.0";
    std::string advertise;  // empty: this host's address
    std::string config;     // these three are passed on when set
    std::string report_dir;
    std::string json;
};

// What rank 0 broadcasts to every rank: a plain struct, sent as bytes.
struct ControllerEndpoint {
    char address[64] = {};
    int port = 0;
    int ok = 0;  // 0: rank 0 could not start the controller; every rank exits 2
};

// Starts the controller for nodes (every name must be a valid node name) and waits up to 30 s
// for it to listen; controller holds it then. ok is 0, with the reason logged, when any step
// failed.
ControllerEndpoint host_controller(const ControllerLaunch& launch,
                                   const std::vector<std::string>& nodes, const std::string& secret,
                                   core::ChildProcess& controller);

}  // namespace preflight::agent
