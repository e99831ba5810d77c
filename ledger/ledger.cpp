#include "ledger/ledger.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "core/log.hpp"
#include "ledger/schema.hpp"
#include "outcome/report/prometheus.hpp"

namespace preflight::ledger {

bool valid_kind(const std::string& kind) {
    return kind == k_kind_gate || kind == k_kind_certify || kind == k_kind_prolog;
}

std::string utc_now() {
    return core::utc_now_rfc3339();
}

std::string utc_time_ago(double seconds) {
    const auto t = std::chrono::system_clock::now() -
                   std::chrono::duration_cast<std::chrono::system_clock::duration>(
                       std::chrono::duration<double>(seconds));
    const std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::optional<double> seconds_since(const std::string& rfc3339) {
    const auto then = outcome::unix_seconds(rfc3339);
    if (!then)
        return std::nullopt;
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return now - *then;
}

nlohmann::json CertificationStatus::to_json() const {
    nlohmann::json j = {{"status", status}};
    if (!at.empty())
        j["at"] = at;
    if (!run_id.empty())
        j["run_id"] = run_id;
    if (!why.empty())
        j["why"] = why;
    return j;
}

std::unique_ptr<Ledger> Ledger::open(const std::string& url, double connect_timeout_s) {
    auto db = open_db(url, connect_timeout_s);
    migrate(*db);
    return std::make_unique<Ledger>(std::move(db));
}

Ledger::Ledger(std::unique_ptr<Db> db) : m_db(std::move(db)) {}

std::optional<Fingerprint> Ledger::latest_fingerprint(const std::string& node) {
    const auto rows = m_db->query(
        "SELECT identity, software FROM fingerprints WHERE node = ? ORDER BY id DESC LIMIT 1",
        {node});
    if (rows.empty())
        return std::nullopt;
    Fingerprint fp;
    fp.identity =
        nlohmann::json::parse(rows[0][0].value_or("{}")).get<std::map<std::string, std::string>>();
    fp.software =
        nlohmann::json::parse(rows[0][1].value_or("{}")).get<std::map<std::string, std::string>>();
    return fp;
}

CertificationStatus Ledger::certification(const std::string& node) {
    CertificationStatus s;
    const auto certs = m_db->query(
        "SELECT at, run_id, verdict, identity_digest, software_digest FROM certifications "
        "WHERE node = ? ORDER BY at DESC, id DESC LIMIT 1",
        {node});
    if (certs.empty())
        return s;
    s.at = certs[0][0].value_or("");
    s.run_id = certs[0][1].value_or("");
    if (certs[0][2].value_or("") != "pass") {
        s.status = "failed";
        return s;
    }
    s.status = "certified";
    const auto latest = m_db->query(
        "SELECT identity_digest, software_digest, first_seen FROM fingerprints WHERE node = ? "
        "ORDER BY id DESC LIMIT 1",
        {node});
    if (latest.empty())
        return s;
    const bool identity = latest[0][0] != certs[0][3];
    const bool software = latest[0][1] != certs[0][4];
    if (identity || software) {
        s.status = "void";
        s.why = std::string(identity && software ? "identity and software"
                            : identity           ? "identity"
                                                 : "software") +
                " changed since the certification (first seen " + latest[0][2].value_or("?") +
                "; preflight ledger diff " + node + ")";
    }
    return s;
}

std::map<std::string, std::vector<double>> Ledger::recent_values(const std::string& check,
                                                                 const std::string& since,
                                                                 int per_node,
                                                                 const std::string& exclude_run) {
    std::map<std::string, std::vector<double>> out;
    const auto rows = m_db->query(
        "SELECT node, value FROM results WHERE check_name = ? AND verdict = 'pass' AND "
        "value IS NOT NULL AND at >= ? AND run_id <> ? AND cached = 0 ORDER BY node, at DESC",
        {check, since, exclude_run});
    for (const auto& row : rows) {
        if (!row[0] || !row[1])
            continue;
        auto& values = out[*row[0]];
        if (static_cast<int>(values.size()) < per_node)
            values.push_back(std::stod(*row[1]));
    }
    return out;
}

std::map<std::string, CheckHistory> Ledger::check_history(const std::string& node,
                                                          const std::vector<std::string>& checks,
                                                          const std::string& since) {
    std::map<std::string, CheckHistory> out;
    for (const auto& check : checks) {
        CheckHistory h;
        const auto mine = m_db->query(
            "SELECT verdict, seconds, at FROM results WHERE node = ? AND check_name = ? AND "
            "at >= ? AND cached = 0 ORDER BY at DESC LIMIT 50",
            {node, check, since});
        std::vector<double> seconds;
        for (const auto& row : mine) {
            const std::string verdict = row[0].value_or("");
            if (h.last_run_at.empty()) {
                h.last_run_at = row[2].value_or("");
                h.last_verdict = verdict;
            }
            if (verdict == "fail" || verdict == "error")
                ++h.node_failures;
            if (row[1])
                seconds.push_back(std::stod(*row[1]));
        }
        h.samples = static_cast<int>(mine.size());
        if (seconds.empty()) {
            // Never ran here: how long it takes elsewhere.
            const auto any = m_db->query(
                "SELECT seconds FROM results WHERE check_name = ? AND seconds IS NOT NULL AND "
                "at >= ? AND cached = 0 ORDER BY at DESC LIMIT 50",
                {check, since});
            for (const auto& row : any)
                if (row[0])
                    seconds.push_back(std::stod(*row[0]));
        }
        if (!seconds.empty()) {
            std::sort(seconds.begin(), seconds.end());
            h.expected_seconds = seconds[seconds.size() / 2];
        }
        const auto peers = m_db->query(
            "SELECT count(*) FROM results WHERE check_name = ? AND node <> ? AND verdict = 'fail' "
            "AND at >= ?",
            {check, node, since});
        h.peer_failures = peers.empty() || !peers[0][0] ? 0 : std::stoi(*peers[0][0]);
        out[check] = h;
    }
    return out;
}

}  // namespace preflight::ledger
