// One preflight run from inventory to report, as the stages of stages.hpp in order: plan, launch,
// connect, node-local, rounds, confirm, judge, act, report. Problems with single nodes become
// `error` for those nodes; the run itself only fails for problems that stop all of it (cannot
// listen, no token).
#pragma once

#include <string>

#include "controller/run/run_options.hpp"
#include "core/config.hpp"
#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

// Returns the report with exit_code set (the one table of core/exit_code.hpp). Throws ConfigError
// for usage errors discovered at start (unknown launcher, missing token for `connect`).
outcome::RunReport run_preflight(const RunOptions& options);

std::string make_run_id();

// `preflight run --dry-run`: plans the run as run_preflight would (configuration, launcher,
// checks) and returns what it would launch, without launching, listening or acting.
std::string dry_run_preflight(const RunOptions& options);

}  // namespace preflight::controller
