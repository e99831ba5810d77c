// `preflight-agent --standalone --profile prolog`: node-local checks without a controller, for a
// Slurm Prolog or a Kubernetes init container (the gate in manifests/k8s/examples). Runs the
// node-scope checks of a run configuration (e.g. a manifests/skus file) within a time budget,
// judges each metric named in `evaluation.floors` against its absolute floor and, when a baseline
// report is given, against threshold_fraction x this node's value in the last controller run. On
// failure it can drain the node itself (so `scontrol show node` shows why, not just "Prolog
// error") through the controller's own drain path (outcome::apply_slurm_drain): a fixed
// "preflight: <class>" reason with the figures in the node's Comment; a node someone else marked is
// left alone; and the circuit breaker of the configuration's `actions` section refuses when too
// many nodes of the partition are drained by preflight already. It writes the outcome as JSON.
// Profiles: prolog (also the Kubernetes gate), epilog (the same checks after a job; slurm/epilog.sh
// always exits 0) and health (slurm.conf HealthCheckProgram: drains on failure and resumes its own
// drain after --resume-after consecutive passes; agent/standalone_health.hpp, slurm/health.md).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/prolog_memory.hpp"
#include "core/config.hpp"
#include "core/model.hpp"
#include "core/process.hpp"
#include "core/unique_fd.hpp"
#include "outcome/reasons.hpp"
#include "plugins/exec_policy.hpp"

namespace preflight::agent {

// What a check that errors or overruns the budget (verdict `error`: could not judge) does to the
// exit code. allow (default, as the Slurm prolog): exit 0, so a hung check never blocks a healthy
// node; block: exit 4 (inconclusive), so an init container refuses to start the workload.
enum class OnError { allow, block };

struct StandaloneOptions {
    std::string profile = "prolog";  // prolog, epilog or health
    std::string node;                // this node's name (default: $SLURMD_NODENAME, else hostname)
    std::string config;    // run configuration YAML; empty: link.netdev with defaults (prolog and
                           // health: also gpu.xid and gpu.health where the NVIDIA driver is loaded)
    std::string baseline;  // report.json of the last controller run; optional
    double budget_s = 20.0;  // every check must finish within this, all together
    std::string sysfs_root = "/";
    plugins::ExecPolicy exec_policy = plugins::ExecPolicy::defaults();
    std::string outcome_path;  // write the outcome JSON here (atomically); empty: none
    // On fail (and on could-not-judge with on_error block): scontrol update NodeName=<node>
    // State=DRAIN Reason=...
    bool drain = false;
    std::string scontrol = "scontrol";
    std::string run_id;  // names this prolog run in the Comment; default: job $SLURM_JOB_ID
    // The circuit breaker (the run configuration's actions section; these override it).
    std::optional<double> max_action_fraction;
    std::optional<int> max_actions;
    bool force = false;  // drain even when the breaker refuses (logged as overridden)
    OnError on_error = OnError::allow;
    // Also write a short outcome here, overwritten in place (Kubernetes: the container's
    // terminationMessagePath, /dev/termination-log, which `kubectl describe pod` shows). Empty:
    // none.
    std::string termination_log;
    // --profile health: resume a node this health check drained after this many consecutive
    // passes, counted in <state_dir>/health-<node>.json.
    int resume_after = 3;
    std::string state_dir = "/var/lib/preflight";
    // The prolog's memory (agent/prolog_memory.hpp, agent/standalone_memory.hpp): reuse a pass
    // younger than this (0: never), plan the checks for budget_s, record in this ledger.
    double cache_ttl_s = 0.0;
    bool plan_budget = false;
    std::string ledger;
    double ledger_timeout_s = 5.0;
};

struct StandaloneOutcome {
    core::Verdict verdict = core::Verdict::error;  // worst over checks (skip alone is pass)
    std::vector<core::CheckResult> results;
    std::vector<std::string> reasons;  // why it failed / could not judge, one per finding
    // The class of the first failing finding (check_error when none failed).
    outcome::FindingClass finding = outcome::FindingClass::check_error;
    std::string drain_reason;   // the fixed reason given to scontrol (fail, or blocked error)
    std::string drain_comment;  // the figures, for the node's Comment
    std::string drain_outcome;  // "drained", "left_alone", "refused" (breaker), "failed"; "" none
    std::string drain_error;    // why not drained: someone else's mark, the breaker, scontrol
    double seconds = 0.0;
    std::string profile = "prolog";
    nlohmann::json health;  // --profile health: the pass count and what was done (null otherwise)
    nlohmann::json cache;   // --cache-ttl: whether a cached pass was reused, from when
    nlohmann::json plan;    // --plan-budget: what ran and what was left out for the budget
    nlohmann::json ledger;  // --ledger: where it was recorded, or why not
    nlohmann::json to_json(const std::string& node) const;
};

// The prolog's memory and ledger (agent/standalone_memory.cpp).
struct PrologPlan {
    // --cache-ttl, --plan-budget or --ledger given, or gpu.xid runs with its default `since`
    bool active = false;
    std::string started;              // when this run began (RFC 3339 UTC)
    std::vector<std::string> checks;  // the node checks to run now
    std::optional<CachedPass> reuse;  // run nothing: these results stand
    std::optional<PrologMemory> memory;
    std::string fingerprint;
    std::string config;
    // --ledger, opened once for the planner and the record; error: why it could not be.
    std::shared_ptr<ledger::Ledger> ledger;
    std::string ledger_error;
    nlohmann::json cache;  // the outcome's "cache" object (null without --cache-ttl)
    nlohmann::json plan;   // the outcome's "plan" object (null without --plan-budget)
    // gpu.xid's `since` for this run: when its last pass on this node began (the memory), so an
    // Xid it already passed over is not read again and one after it is. nullopt: the config's
    // (default "boot").
    std::optional<std::string> xid_since;
};

PrologPlan prepare_prolog(const StandaloneOptions& options, const std::string& node,
                          const core::RunConfig& cfg, std::vector<std::string> node_checks);

// After judging: remembers (unless the results were reused) and records in the ledger; fills
// outcome.ledger.
void finish_prolog(PrologPlan& plan, StandaloneOutcome& outcome, const StandaloneOptions& options,
                   const std::string& node);

// Judges results of one node: check verdicts, floors, baseline. Pure; exposed for unit tests.
// baseline_metrics: check -> metric -> value from the last controller run ({} when none).
void judge_standalone(StandaloneOutcome& outcome, const core::EvaluationConfig& eval,
                      const std::map<std::string, std::map<std::string, double>>& baseline_metrics,
                      const std::string& baseline_run);

// This node's metrics from a controller report.json: check -> metric -> value. Error for an
// unreadable file; an absent node gives an empty map.
core::Result<std::map<std::string, std::map<std::string, double>>> load_baseline(
    const std::string& path, const std::string& node, std::string* run_id);

// Exit code for a verdict: 0 pass/warn/skip, 1 fail, for error 0 (allow) or 4 (block).
int standalone_exit_code(core::Verdict verdict, OnError on_error);

// The termination message: "preflight <node>: <verdict>" and one line per reason, cut to the
// 4096 bytes Kubernetes keeps.
std::string termination_message(const std::string& node, const StandaloneOutcome& outcome,
                                int exit_code);

// Sets outcome.drain_reason (the fixed reason of outcome.finding) and outcome.drain_comment (the
// reasons and " run=<run>", sanitized for the node's Comment).
void describe_drain(StandaloneOutcome& outcome, const std::string& run);

// What a scheduler adds to a standalone run (integrations/slurm/slurm_standalone.hpp: the
// prolog's drain and the health check). An empty hook: that part is not in this build.
struct StandaloneHooks {
    // Marks the node after a failed (or blocked) run with --drain: fills outcome.drain_*; true
    // when the circuit breaker refused (exit 3).
    std::function<bool(StandaloneOutcome& outcome, const std::string& node, const std::string& run,
                       const StandaloneOptions& options, const core::ActionsConfig& actions,
                       core::CommandRunner& runner)>
        drain;
    // --profile health: takes the node's health-check lock (held until the run ends; error
    // "busy" when another run holds it), then after the checks counts, drains and resumes
    // (judged false when the run was interrupted) and gives the exit code.
    std::function<core::Result<core::UniqueFd>(const std::string& state_dir,
                                               const std::string& node)>
        lock_health;
    std::function<int(StandaloneOutcome& outcome, const std::string& node, bool judged,
                      const StandaloneOptions& options, const core::ActionsConfig& actions,
                      core::CommandRunner& runner)>
        apply_health;
};

// Steps of run_standalone (standalone_steps.cpp).
// Options the run cannot go on with: exit 2 with the reason on stderr; nullopt when they are fine.
std::optional<int> refuse_bad_options(const StandaloneOptions& options,
                                      const StandaloneHooks& hooks);

// The health check's per-node lock into lock; an exit code when this run must not go on (0:
// another health check of this node still runs).
std::optional<int> lock_health_check(const StandaloneOptions& options, const StandaloneHooks& hooks,
                                     const std::string& node, core::UniqueFd& lock);

// The outcome for the operator (and the prolog's log in slurmd's): verdict, reasons, what was
// drained or not and why, the memory, the health count, and what the exit code means.
void print_outcome(const StandaloneOutcome& outcome, const std::string& node,
                   const StandaloneOptions& options, int rc, int sig);

// Runs the profile. Exit code (core::ExitCode): 0 pass (or could not judge, unless on_error is
// block: a hung or crashed check never drains a node), 1 fail (and drained when asked, or left
// alone when someone else marked the node), 2 usage/config error, 3 the circuit breaker refused to
// drain, 4 could not judge with on_error block.
int run_standalone(const StandaloneOptions& options, core::CommandRunner& runner,
                   const StandaloneHooks& hooks = {});

}  // namespace preflight::agent
