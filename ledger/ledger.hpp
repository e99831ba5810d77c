// The certification ledger: every run, prolog and certification that is given a ledger records
// each node's results (metrics, the judge's reference, the fingerprint it ran under) and, for a
// certification, the node's certification. It answers what an operator asks before trusting a
// node: when it was last certified and on what, whether it changed since (then the certification
// is void), how its figures moved (`preflight ledger show/history/diff`), and what the self-history
// rule, the result cache and the time-budget planner need.
// Writes of one run are one transaction (batched multi-row inserts): a failed write leaves the
// ledger as it was, and the run's report.json can be imported later (`preflight ledger import`).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/db.hpp"
#include "ledger/fingerprint.hpp"
#include "outcome/run_report.hpp"

namespace preflight::ledger {

// gate: `preflight run` (a job gate or a sweep); certify: a certification (its passing nodes are
// certified, its failing nodes are not); prolog: preflight-agent --standalone.
inline constexpr const char* k_kind_gate = "gate";
inline constexpr const char* k_kind_certify = "certify";
inline constexpr const char* k_kind_prolog = "prolog";

bool valid_kind(const std::string& kind);

struct RecordOptions {
    std::string kind = k_kind_gate;
    // certify: node -> certification verdict (pass: certified, fail: not certified). Nodes absent
    // get none: a certification that could not judge a node certifies nothing about it. Empty
    // with kind certify and certify_by_verdict: taken from each node's verdict (pass / fail;
    // others none).
    std::map<std::string, core::Verdict> certifications;
    bool certify_by_verdict = true;  // false: only the nodes in certifications
    std::string recorded_by;         // "preflight run on HOST", "preflight-agent prolog"
};

struct RecordSummary {
    bool already = false;  // this run_id was recorded before: nothing written
    int results = 0;
    int fingerprints = 0;  // nodes whose fingerprint was new or changed
    int certifications = 0;
};

// One node's last certification and whether it still holds.
struct CertificationStatus {
    // certified, void (the fingerprint changed since), failed (the last certification failed),
    // never (no certification recorded)
    std::string status = "never";
    std::string at;
    std::string run_id;
    std::string why;  // void: "identity changed", "software changed", both
    nlohmann::json to_json() const;
};

struct CheckHistory {
    int samples = 0;  // results of this check on this node (these nodes) in the window
    // How long it takes: for one node the median of its own times (else of any node's); for a
    // fleet the 90th percentile of recent times, as a batch waits for its slowest nodes.
    std::optional<double> expected_seconds;
    std::string last_run_at;  // "" when it never ran on this node (on one of these nodes)
    std::string last_verdict;
    int node_failures = 0;  // fail or error results on this node (these nodes) in the window
    int peer_failures = 0;  // fail results on other nodes in the window
    // Fleet only: how many nodes were asked about, and how many of them never ran the check.
    int nodes = 0;
    int nodes_unmeasured = 0;
};

class Ledger {
  public:
    // Opens (a SQLite file is created) and applies missing migrations. Throws DbError.
    static std::unique_ptr<Ledger> open(const std::string& url, double connect_timeout_s = 10.0);
    explicit Ledger(std::unique_ptr<Db> db);

    std::string describe() const { return m_db->describe(); }
    Db& db() { return *m_db; }

    // Records a finished run in one transaction. Throws DbError (nothing written then).
    RecordSummary record(const outcome::RunReport& report, const RecordOptions& options);

    CertificationStatus certification(const std::string& node);
    std::optional<Fingerprint> latest_fingerprint(const std::string& node);

    // `ledger show NODE`: fingerprint, certification status, the latest result of each check.
    nlohmann::json show(const std::string& node);
    // `ledger history`: results, newest first, of the given nodes (all when empty) since an
    // RFC 3339 time ("" for all), at most limit rows.
    nlohmann::json history(const std::vector<std::string>& nodes, const std::string& since,
                           int limit);
    // `ledger diff NODE`: what changed between the node's last two certifications (fingerprint
    // and judged figures), or between its last certification and now when it has one.
    nlohmann::json diff(const std::string& node);

    // Self-history: per node, the judged values of check's passing results since `since`, newest
    // first, at most per_node each, leaving out run_id (the run being judged).
    std::map<std::string, std::vector<double>> recent_values(const std::string& check,
                                                             const std::string& since, int per_node,
                                                             const std::string& exclude_run);

    // Planner: what the ledger knows of each check on this node (and its peers) since `since`.
    std::map<std::string, CheckHistory> check_history(const std::string& node,
                                                      const std::vector<std::string>& checks,
                                                      const std::string& since);
    // A run's planner (fleet_history.cpp): the same for a set of nodes run together. last_run_at
    // is the oldest of the nodes' latest runs ("" when one never ran it), last_verdict "fail" or
    // "error" when the latest run of any node ended so.
    std::map<std::string, CheckHistory> fleet_check_history(const std::vector<std::string>& nodes,
                                                            const std::vector<std::string>& checks,
                                                            const std::string& since);

  private:
    std::unique_ptr<Db> m_db;
};

// RFC 3339 UTC of now minus seconds ("2026-11-26T14:02:15Z"), for `since` arguments.
std::string utc_time_ago(double seconds);
std::string utc_now();
// Seconds since an RFC 3339 UTC time; nullopt when it does not parse.
std::optional<double> seconds_since(const std::string& rfc3339);

}  // namespace preflight::ledger
