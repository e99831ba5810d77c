// Ledger::fleet_check_history: what the ledger knows of each check across the nodes of one run,
// for `preflight run --budget-s` (ledger/budget_planner.hpp). Two queries per check whatever the
// node count, both on the covering index of schema version 2.
#include <algorithm>
#include <unordered_set>

#include "ledger/ledger.hpp"

namespace preflight::ledger {

namespace {

// Recent times of a check, fleet-wide: a batch waits for its slowest nodes, so the planner
// expects the 90th percentile, not the median.
constexpr int k_duration_samples = 4096;
constexpr double k_duration_quantile = 0.9;

int as_int(const Value& v) {
    return v ? std::stoi(*v) : 0;
}

// "error" is worse than "fail" here: it says the check could not tell, which the planner treats
// as doubt about the node, as it does a failure.
int badness(const std::string& verdict) {
    if (verdict == "error")
        return 3;
    if (verdict == "fail")
        return 2;
    if (verdict == "warn")
        return 1;
    return 0;
}

}  // namespace

std::map<std::string, CheckHistory> Ledger::fleet_check_history(
    const std::vector<std::string>& nodes, const std::vector<std::string>& checks,
    const std::string& since) {
    const std::unordered_set<std::string> ours(nodes.begin(), nodes.end());
    // Per node: its latest run, that run's verdict, and its results, fails and errors in the
    // window; one scan of the covering index (schema version 2). The latest run's verdict:
    // SQLite takes a bare column from the row max() chose; PostgreSQL orders an array.
    const std::string latest_verdict =
        m_db->backend() == Backend::sqlite ? "verdict" : "(array_agg(verdict ORDER BY at DESC))[1]";
    std::map<std::string, CheckHistory> out;
    for (const auto& check : checks) {
        CheckHistory h;
        h.nodes = static_cast<int>(ours.size());
        const auto per_node =
            m_db->query("SELECT node, max(at), " + latest_verdict +
                            ", count(*), sum(CASE WHEN verdict = 'fail' THEN 1 ELSE 0 END), "
                            "sum(CASE WHEN verdict = 'error' THEN 1 ELSE 0 END) FROM results WHERE "
                            "check_name = ? AND at >= ? AND cached = 0 GROUP BY node",
                        {check, since});
        int measured = 0;
        std::string oldest_latest;
        for (const auto& row : per_node) {
            if (!row[0] || !row[1])
                continue;
            const int fails = as_int(row[4]);
            if (ours.count(*row[0]) == 0) {
                h.peer_failures += fails;
                continue;
            }
            ++measured;
            h.samples += as_int(row[3]);
            h.node_failures += fails + as_int(row[5]);
            if (oldest_latest.empty() || *row[1] < oldest_latest)
                oldest_latest = *row[1];
            // The worst of the nodes' latest verdicts stands for the fleet.
            if (row[2] && (h.last_verdict.empty() || badness(*row[2]) > badness(h.last_verdict)))
                h.last_verdict = *row[2];
        }
        h.nodes_unmeasured = h.nodes - measured;
        h.last_run_at = h.nodes_unmeasured > 0 ? std::string() : oldest_latest;
        const auto times = m_db->query(
            "SELECT seconds FROM results WHERE check_name = ? AND seconds IS NOT NULL AND at >= ? "
            "AND cached = 0 ORDER BY at DESC LIMIT " +
                std::to_string(k_duration_samples),
            {check, since});
        std::vector<double> seconds;
        for (const auto& row : times)
            if (row[0])
                seconds.push_back(std::stod(*row[0]));
        if (!seconds.empty()) {
            std::sort(seconds.begin(), seconds.end());
            const auto at = static_cast<std::size_t>(k_duration_quantile *
                                                     static_cast<double>(seconds.size() - 1));
            h.expected_seconds = seconds[at];
        }
        out[check] = h;
    }
    return out;
}

}  // namespace preflight::ledger
