// One preflight run from inventory to report: start the server, launch agents, run round 0
// (node-local checks) and the group rounds, evaluate against cohorts, plan (and with --apply carry
// out) actions, write the reports. Problems with single nodes become `error` for those nodes; the
// run itself only fails for problems that stop all of it (cannot listen, no token).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "controller/launch/slurm_launcher.hpp"
#include "core/config.hpp"
#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

struct RunOptions {
    std::vector<core::Node> nodes;
    core::RunConfig config;
    std::string launcher = "local";
    std::string report_dir;  // agent logs and report files; empty: none written
    std::string json_path;   // also write the JSON report here
    bool apply = false;
    bool force = false;        // with apply: act even when the circuit breaker trips (logged)
    std::string agent_path;    // preflight-agent for the local launcher
    std::string token_file;    // connect launcher: the shared token (else from the environment)
    SlurmLaunchOptions slurm;  // slurm launcher: srun, partition, reservation, allocation
    std::string log_level = "info";
    bool log_json = false;
    bool progress = true;                            // progress lines on stderr while rounds run
    const std::atomic<bool>* interrupted = nullptr;  // set by a signal handler
};

// Returns the report with exit_code set (DESIGN.md exit codes). Throws ConfigError for usage errors
// discovered at start (unknown launcher, missing token for `connect`).
outcome::RunReport run_preflight(const RunOptions& options);

std::string make_run_id();

}  // namespace preflight::controller
