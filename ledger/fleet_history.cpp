// Ledger::fleet_check_history: what the ledger knows of each check across the nodes of one run,
// for `preflight run --budget-s` (ledger/budget_planner.hpp). A handful of grouped queries per
// check whatever the node count.
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
    std::map<std::string, CheckHistory> out;
    for (const auto& check : checks) {
        CheckHistory h;
        h.nodes = static_cast<int>(ours.size());
        const auto per_node = m_db->query(
            "SELECT node, max(at), count(*), sum(CASE WHEN verdict = 'fail' THEN 1 ELSE 0 END), "
            "sum(CASE WHEN verdict = 'error' THEN 1 ELSE 0 END) FROM results WHERE check_name = ? "
            "AND at >= ? AND cached = 0 GROUP BY node",
            {check, since});
        int measured = 0;
        std::string oldest_latest;
        for (const auto& row : per_node) {
            if (!row[0] || !row[1])
                continue;
            const int fails = as_int(row[3]);
            if (ours.count(*row[0]) == 0) {
                h.peer_failures += fails;
                continue;
            }
            ++measured;
            h.samples += as_int(row[2]);
            h.node_failures += fails + as_int(row[4]);
            if (oldest_latest.empty() || *row[1] < oldest_latest)
                oldest_latest = *row[1];
        }
        h.nodes_unmeasured = h.nodes - measured;
        h.last_run_at = h.nodes_unmeasured > 0 ? std::string() : oldest_latest;
        // The verdicts of each node's latest result: the worst of them stands for the fleet.
        const auto latest = m_db->query(
            "SELECT r.node, r.verdict FROM results r JOIN (SELECT node, max(at) AS at FROM results "
            "WHERE check_name = ? AND at >= ? AND cached = 0 GROUP BY node) m ON r.node = m.node "
            "AND r.at = m.at WHERE r.check_name = ? AND r.cached = 0",
            {check, since, check});
        for (const auto& row : latest) {
            if (!row[0] || !row[1] || ours.count(*row[0]) == 0)
                continue;
            if (h.last_verdict.empty() || badness(*row[1]) > badness(h.last_verdict))
                h.last_verdict = *row[1];
        }
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
