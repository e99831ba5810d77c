#include "agent/standalone_memory.hpp"

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "ledger/budget_planner.hpp"
#include "ledger/ledger.hpp"

namespace preflight::agent {

namespace {

constexpr const char* k_xid = "gpu.xid";

// gpu.xid's `since` is left to us when the configuration does not set it, or sets "boot".
bool xid_since_is_default(const core::RunConfig& cfg) {
    const auto params = cfg.check_params.find(k_xid);
    if (params == cfg.check_params.end() || !params->second.is_object())
        return true;
    const auto since = params->second.find("since");
    return since == params->second.end() ||
           (since->is_string() && since->get<std::string>() == "boot");
}

// The ledger, opened on first use; null (and the error kept) when it cannot be.
ledger::Ledger* open_ledger(PrologPlan& plan, const StandaloneOptions& options) {
    if (!plan.ledger && plan.ledger_error.empty() && !options.ledger.empty()) {
        try {
            plan.ledger = ledger::Ledger::open(options.ledger, options.ledger_timeout_s);
        } catch (const ledger::DbError& e) {
            plan.ledger_error = e.what();
        }
    }
    return plan.ledger.get();
}

std::map<std::string, ledger::CheckHistory> history_for(PrologPlan& plan,
                                                        const StandaloneOptions& options,
                                                        const std::string& node,
                                                        const std::vector<std::string>& checks,
                                                        double window_s) {
    if (auto* l = open_ledger(plan, options)) {
        try {
            return l->check_history(node, checks, ledger::utc_time_ago(window_s));
        } catch (const ledger::DbError& e) {
            spdlog::warn("{}; planning from this node's own memory", e.what());
        }
    } else if (!options.ledger.empty()) {
        spdlog::warn("{}; planning from this node's own memory", plan.ledger_error);
    }
    return plan.memory->history();
}

outcome::RunReport prolog_report(const StandaloneOutcome& outcome, const std::string& node,
                                 const std::string& at, bool reused) {
    outcome::RunReport r;
    const char* job = std::getenv("SLURM_JOB_ID");
    r.run_id = "prolog-" + node + "-" + (job ? std::string(job) + "-" : "") + at;
    r.started_at = at;
    r.finished_at = at;
    r.launcher = "standalone " + outcome.profile;
    outcome::NodeReport n;
    n.name = node;
    n.verdict = outcome.verdict;
    n.reasons = outcome.reasons;
    for (const auto& res : outcome.results) {
        outcome::NodeCheck c = outcome::node_check_of(res);
        c.cached = reused;
        n.checks.push_back(std::move(c));
    }
    r.nodes.push_back(std::move(n));
    return r;
}

}  // namespace

PrologPlan prepare_prolog(const StandaloneOptions& options, const std::string& node,
                          const core::RunConfig& cfg, std::vector<std::string> node_checks) {
    PrologPlan plan;
    plan.started = core::utc_now_rfc3339();
    plan.checks = std::move(node_checks);
    const bool reuse_or_plan =
        options.cache_ttl_s > 0.0 || options.plan_budget || !options.ledger.empty();
    const bool xid = xid_since_is_default(cfg) && !options.state_dir.empty() &&
                     std::find(plan.checks.begin(), plan.checks.end(), k_xid) != plan.checks.end();
    plan.active = reuse_or_plan || xid;
    if (!plan.active)
        return plan;
    plan.memory = PrologMemory::load(options.state_dir, node);
    if (xid) {
        plan.xid_since = plan.memory->last_pass_started(k_xid);
        if (plan.xid_since)
            spdlog::info("gpu.xid: kernel events since its last pass on this node, at {}",
                         *plan.xid_since);
    }
    if (!reuse_or_plan)
        return plan;  // gpu.xid's memory only: no cache, so no digest of the node or the config
    plan.config = config_digest(cfg.checks, cfg.check_params);
    plan.fingerprint = node_fingerprint_digest(options.sysfs_root);
    if (options.cache_ttl_s > 0.0) {
        plan.reuse = plan.memory->reusable(plan.fingerprint, plan.config, options.cache_ttl_s);
        if (plan.reuse) {
            plan.cache = {{"reused", true},
                          {"from", plan.reuse->at},
                          {"age_s", plan.reuse->age_s},
                          {"ttl_s", options.cache_ttl_s},
                          {"why", "the node's fingerprint and the configuration are unchanged"}};
            plan.checks.clear();
            return plan;
        }
        plan.cache = {
            {"reused", false},
            {"ttl_s", options.cache_ttl_s},
            {"why", plan.fingerprint.empty()
                        ? "nothing identifies this node: no cache"
                        : "no pass of this fingerprint and configuration within the TTL"}};
    }
    if (options.plan_budget) {
        ledger::PlannerOptions po;
        po.budget_s = options.budget_s;
        const auto history = history_for(plan, options, node, plan.checks, po.window_s);
        const auto planned = ledger::plan_budget(plan.checks, history, po);
        plan.checks.clear();
        for (const auto& p : planned)
            if (p.run)
                plan.checks.push_back(p.check);
        plan.plan = ledger::planned_json(planned, po);
    }
    return plan;
}

void finish_prolog(PrologPlan& plan, StandaloneOutcome& outcome, const StandaloneOptions& options,
                   const std::string& node) {
    outcome.cache = plan.cache;
    outcome.plan = plan.plan;
    if (!plan.active)
        return;
    const std::string at = core::utc_now_rfc3339();
    if (!plan.reuse) {
        plan.memory->remember(outcome.results, outcome.verdict, plan.fingerprint, plan.config, at,
                              plan.started);
        if (auto st = plan.memory->save(); !st)
            spdlog::warn("prolog memory not saved: {}", st.error().message);
    }
    if (options.ledger.empty())
        return;
    outcome.ledger = {{"ledger", ledger::describe_url(options.ledger)}, {"recorded", false}};
    auto* l = open_ledger(plan, options);
    if (!l) {
        outcome.ledger["error"] = plan.ledger_error;
        spdlog::error("{}: the verdict stands; this prolog run is not in the ledger",
                      plan.ledger_error);
        return;
    }
    try {
        ledger::RecordOptions how;
        how.kind = ledger::k_kind_prolog;
        how.recorded_by = "preflight-agent " + outcome.profile;
        const auto s = l->record(prolog_report(outcome, node, at, plan.reuse.has_value()), how);
        outcome.ledger["recorded"] = true;
        outcome.ledger["results"] = s.results;
    } catch (const ledger::DbError& e) {
        outcome.ledger["error"] = e.what();
        spdlog::error("{}: the verdict stands; this prolog run is not in the ledger", e.what());
    }
}

}  // namespace preflight::agent
