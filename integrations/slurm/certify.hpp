// Certification of drained nodes before they return to service (Slurm flow). Only nodes drained
// with a "preflight:" reason (e.g. "preflight: uncertified" after a reimage) are candidates;
// others are reported and left alone. With apply:
//   1. a maintenance reservation over the candidates (Users=<us>, Flags=MAINT,IGNORE_JOBS), so
//      that no user job can land on them once they are resumed;
//   2. resume the candidates (still only if their reason is ours);
//   3. validate them with the srun launcher inside the reservation (run_preflight, plan only),
//      with the reference nodes (known-good partners, reserved too) when given;
//   4. nodes that pass stay resumed (certified); the others are drained again with the finding;
//   5. delete the reservation.
// A candidate that cannot be measured is never certified: with a collective check configured and
// fewer than two nodes (candidates and reference nodes together), nothing is resumed and the
// candidates are reported incomplete; a candidate whose result is inconclusive or incomplete is
// drained again with its old reason.
// The reservation is deleted on every path (error, exception), and a node resumed in step 2 but not
// judged is drained again with its old reason: certification fails closed.
// The options are laid out so that a Kubernetes flow can sit beside this one (`--k8s`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/run/orchestrator.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::controller {

struct CertifyOptions {
    std::vector<std::string> nodes;  // candidates (hostlist already expanded)
    // Known-good, idle partners for the collective checks (also in run.nodes, marked reference):
    // reserved with the candidates, never resumed, drained or certified.
    std::vector<std::string> reference_nodes;
    RunOptions run;            // config, report dir, agent, advertise
    SlurmLaunchOptions slurm;  // srun options of the validation step
    bool apply = false;        // without it: say what would be done, change nothing
    // Also say what would be created and launched (the reservation's scontrol argv, the srun
    // step); still reads node states, changes and starts nothing. Excludes apply.
    bool dry_run = false;
    std::string scontrol = "scontrol";
    int reservation_minutes = 30;  // Duration= of the reservation (a safety net; deleted anyway)
    std::string user;              // Users= of the reservation (default: the effective user)
};

struct CertifyNode {
    std::string node;
    // certified, failed, skipped, would-certify, error, incomplete (no partner for a collective:
    // left drained, exit 6) or inconclusive (left drained, exit 4)
    std::string outcome;
    std::string before;  // state and reason before
    std::string detail;  // why, or the new drain reason
};

struct CertifyReport {
    std::string run_id;
    std::string reservation;  // created name; empty when none
    bool reservation_deleted = false;
    std::vector<CertifyNode> nodes;
    // 0 all candidates certified, 1 some failed, 4 errors or inconclusive, 6 incomplete, 2 usage;
    // when several apply: 1, then 4, then 6 (as every binary).
    int exit_code = 0;
    std::string error;    // what stopped the flow, if anything
    std::string dry_run;  // dry run: what would be created and launched, as text
    nlohmann::json to_json() const;
    std::string to_text() const;
};

// run_fn runs the validation (run_preflight in production; a fake in unit tests).
CertifyReport certify_slurm(const CertifyOptions& options, core::CommandRunner& runner,
                            const std::function<outcome::RunReport(const RunOptions&)>& run_fn);

}  // namespace preflight::controller
