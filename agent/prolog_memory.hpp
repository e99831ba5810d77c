// What a standalone prolog remembers between runs on its node, in <state-dir>/prolog-<node>.json
// (written atomically): per check the last results (when, verdict, seconds) for the time-budget
// planner, and the last passing outcome as a result cache keyed by the node's fingerprint and the
// configuration.
//   --cache-ttl S   reuse the last pass when it is younger than S, the node's fingerprint
//                   (node.fingerprint's sysfs facts: board, machine-id, GPUs, NICs, kernel,
//                   driver, firmware) and the configuration (checks and params) are unchanged;
//                   the outcome says so ("cache": reused, from, age). Only a pass is reused: a
//                   fail or error is always measured again.
//   --plan-budget   pick the checks that fit --budget-s from their expected time and value
//                   (ledger/budget_planner.hpp), from this file or, with --ledger, the ledger.
// A missing, unreadable or foreign file is an empty memory: nothing is reused, everything runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/result.hpp"
#include "ledger/ledger.hpp"

namespace preflight::agent {

struct CachedPass {
    std::string at;  // RFC 3339 UTC of the run whose results are reused
    double age_s = 0.0;
    std::vector<core::CheckResult> results;
};

class PrologMemory {
  public:
    // Never fails: an unusable file is logged and read as empty.
    static PrologMemory load(const std::string& state_dir, const std::string& node);

    // The cached pass, if it may be reused now.
    std::optional<CachedPass> reusable(const std::string& fingerprint,
                                       const std::string& config_digest, double ttl_s) const;
    // Per check: what the planner needs (ledger::CheckHistory without peers).
    std::map<std::string, ledger::CheckHistory> history() const;
    // Adds this run's results (not the reused ones); caches them when verdict is pass. started:
    // when the run began (RFC 3339 UTC), kept with each result; empty: not kept.
    void remember(const std::vector<core::CheckResult>& results, core::Verdict verdict,
                  const std::string& fingerprint, const std::string& config_digest,
                  const std::string& at, const std::string& started = "");
    // When the newest remembered run in which check passed began; nullopt when none is kept (a
    // fail or error, or a run remembered without its start, is never one).
    std::optional<std::string> last_pass_started(const std::string& check) const;
    core::Status save() const;

  private:
    std::string m_path;
    std::string m_node;
    nlohmann::json m_doc = nlohmann::json::object();
};

// The digest of a configuration's checks and their params (what a cached pass was judged with).
std::string config_digest(const std::vector<std::string>& checks,
                          const std::map<std::string, nlohmann::json>& params);

// identity + software digests of the facts under sysfs_root ("" when nothing identifies the node:
// then nothing is cached).
std::string node_fingerprint_digest(const std::string& sysfs_root);

}  // namespace preflight::agent
