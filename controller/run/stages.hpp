// The stages of one run, in order (run_preflight in orchestrator.cpp calls them):
//   plan -> launch -> connect -> node-local -> rounds -> confirm -> judge -> act -> report
// Each stage is a function with a typed input and output; what the later stages share (the
// server, the launcher, the per-node results) lives in a RunContext the stages fill in turn.
// Problems with single nodes become `error` for those nodes; only problems that stop the whole
// run (cannot listen, no secret, a bad topology file) throw ConfigError, from plan or launch.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/launch/launcher.hpp"
#include "controller/net/server.hpp"
#include "controller/run/group_rounds.hpp"
#include "controller/run/run_options.hpp"
#include "core/check_spec.hpp"
#include "ledger/ledger.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller {

using NodeResults = std::map<std::string, std::map<std::string, core::CheckResult>>;

// plan: what this run will do, decided before anything starts.
struct RunPlan {
    std::string secret;  // node keys derive from it (core/keys.hpp)
    std::unique_ptr<Launcher> launcher;
    std::map<std::string, std::string> leaf_of;   // node -> leaf switch (topology file)
    std::vector<std::string> node_checks;         // round 0, in config order
    std::vector<std::string> group_checks;        // rounds 1-3, in config order
    std::vector<std::string> around_collectives;  // node checks read before and after them
    std::shared_ptr<core::TlsContext> tls;
};

// Everything the stages after `plan` share.
struct RunContext {
    RunContext(const RunOptions& opts, RunPlan run_plan, outcome::RunReport run_report)
        : options(opts),
          plan(std::move(run_plan)),
          report(std::move(run_report)),
          checks(opts.config.checks) {}

    const RunOptions& options;
    RunPlan plan;
    outcome::RunReport report;
    std::unique_ptr<Server> server;
    std::map<std::string, std::string> unreachable;  // node -> why its agent never connected
    std::vector<std::string> live;                   // nodes whose agent connected
    std::map<std::string, core::Node> by_name;
    std::vector<std::string> checks;  // the checks judged: the configured ones within the budget
    NodeResults results;
    std::vector<SuspectSearch> searches;  // rounds -> confirm, one per group check
    int step_batches = 0;
    std::unique_ptr<ledger::Ledger> ledger;  // open when the run records (ledger.url)
    std::function<void(const std::string&, std::size_t, std::size_t)> progress;

    // --budget-s: when the run must end, and whether it reached that point before finishing.
    std::optional<std::chrono::steady_clock::time_point> budget_deadline;
    std::atomic<bool> budget_spent{false};

    // Stopped early, by a signal or by the budget: verdicts partial, no action.
    bool interrupted() const {
        return budget_spent.load() ||
               (options.interrupted != nullptr && options.interrupted->load());
    }
    // Whether the run has reached its budget's deadline (and, once it has, that it stays spent).
    bool budget_passed();
    // Why a step or check did not run when interrupted() holds.
    std::string interrupted_because() const;
    std::string cohort_of(const std::string& node) const;
    std::vector<std::string> still_connected();
};

RunPlan plan_run(const RunOptions& options, outcome::RunReport& report);
// `--dry-run`: what launch_agents would start for this run (the launcher's describe()), with the
// controller's address as agents would dial it (PORT where the port is chosen at run time).
// Starts, creates and listens on nothing.
std::string describe_launch(RunContext& run);
// --budget-s (stages_budget.cpp): drops the checks that do not fit the budget, from the ledger's
// history of these nodes, and sets the run's deadline. The report's ledger section says what was
// left out, why, and when it last ran.
void plan_within_budget(RunContext& run);
void launch_agents(RunContext& run);
void connect_agents(RunContext& run);
void run_node_local(RunContext& run);
void run_rounds(RunContext& run);
void confirm_and_close(RunContext& run);
void judge_run(RunContext& run);
void act_on_verdicts(RunContext& run);
void write_run_report(RunContext& run);
// With a ledger (ledger.url or --ledger; stages_ledger.cpp): opens it and applies the
// self-history rule after judge; records the run just before the report is written. A ledger
// that cannot be opened or written is an error in the report and the log, never a lost run: the
// verdicts and reports stand, and the report.json can be imported later.
void ledger_history(RunContext& run);
// Opens the run's ledger once (run.ledger) and starts report.ledger; false when it cannot be
// opened (the error is in the report and the log).
bool open_run_ledger(RunContext& run);
void ledger_record(RunContext& run);

// The params a check runs with: its configured params, with `phase` set when given.
nlohmann::json step_params(const core::RunConfig& cfg, const std::string& check,
                           const std::string& phase = "");
// A check's own timeout_s (its params or their default), for the controller's step deadline.
double step_timeout_s(const std::string& check, const nlohmann::json& params, double fallback);

}  // namespace preflight::controller
