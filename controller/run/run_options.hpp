// What one run is asked to do: the nodes, the configuration, the launcher and its settings, where
// reports go, and whether to act.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "controller/launch/launcher.hpp"
#include "core/config.hpp"
#include "core/model.hpp"
#include "outcome/sink.hpp"

namespace preflight::controller {

struct RunOptions {
    std::vector<core::Node> nodes;
    core::RunConfig config;
    std::string launcher = "local";
    // The launchers and action targets the run may use, as the integrations register them
    // (integrations/registry.hpp); by default only this layer's own launchers and no target.
    LauncherTable launchers = builtin_launchers();
    outcome::SinkTable sinks;
    std::string report_dir;  // agent logs and report files; empty: none written
    std::string json_path;   // also write the JSON report here
    bool apply = false;
    bool force = false;       // with apply: act even when the circuit breaker trips (logged)
    std::string agent_path;   // preflight-agent for the local launcher
    std::string secret_file;  // connect launcher: the cluster secret (else from the environment)
    std::string log_level = "info";
    bool log_json = false;
    bool progress = true;                            // progress lines on stderr while rounds run
    const std::atomic<bool>* interrupted = nullptr;  // set by a signal handler
    // --budget-s: seconds the whole run may take (0: no budget). The checks that fit are chosen
    // from the ledger's history (stages_budget.cpp) and the run stops at the budget.
    double budget_s = 0.0;
};

}  // namespace preflight::controller
