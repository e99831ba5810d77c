// What `preflight ledger show / history / diff` print, as JSON.
#include <set>

#include "ledger/ledger.hpp"

namespace preflight::ledger {

namespace {

nlohmann::json parse_or_null(const Value& v) {
    if (!v)
        return nullptr;
    auto j = nlohmann::json::parse(*v, nullptr, false);
    return j.is_discarded() ? nlohmann::json(*v) : j;
}

nlohmann::json number_or_null(const Value& v) {
    if (!v)
        return nullptr;
    try {
        return std::stod(*v);
    } catch (const std::exception&) {
        return nullptr;
    }
}

// results columns, in this order, for result_json().
const char* const k_result_columns =
    "node, run_id, kind, check_name, verdict, undecided, metric, value, metrics, reference, "
    "detail, seconds, at, identity_digest, software_digest, cached";

nlohmann::json result_json(const Row& r) {
    nlohmann::json j = {{"node", r[0].value_or("")},      {"run_id", r[1].value_or("")},
                        {"kind", r[2].value_or("")},      {"check", r[3].value_or("")},
                        {"verdict", r[4].value_or("")},   {"undecided", r[5].value_or("none")},
                        {"metrics", parse_or_null(r[8])}, {"detail", r[10].value_or("")},
                        {"at", r[12].value_or("")},       {"cached", r[15].value_or("0") == "1"}};
    if (r[6]) {
        j["metric"] = *r[6];
        j["value"] = number_or_null(r[7]);
    }
    if (r[9])
        j["reference"] = parse_or_null(r[9]);
    if (r[11])
        j["seconds"] = number_or_null(r[11]);
    if (r[13])
        j["identity_digest"] = *r[13];
    if (r[14])
        j["software_digest"] = *r[14];
    return j;
}

Fingerprint fingerprint_row(const Row& r, std::size_t identity_col) {
    Fingerprint fp;
    fp.identity = parse_or_null(r[identity_col]).get<std::map<std::string, std::string>>();
    fp.software = parse_or_null(r[identity_col + 1]).get<std::map<std::string, std::string>>();
    return fp;
}

nlohmann::json fingerprint_json(const Row& r) {
    // id, identity_digest, software_digest, identity, software, first_seen, run_id
    return {{"identity_digest", r[1].value_or("")}, {"software_digest", r[2].value_or("")},
            {"identity", parse_or_null(r[3])},      {"software", parse_or_null(r[4])},
            {"first_seen", r[5].value_or("")},      {"run_id", r[6].value_or("")}};
}

}  // namespace

nlohmann::json Ledger::show(const std::string& node) {
    nlohmann::json j = {{"node", node}, {"ledger", describe()}};
    const auto fp = m_db->query(
        "SELECT id, identity_digest, software_digest, identity, software, first_seen, run_id "
        "FROM fingerprints WHERE node = ? ORDER BY id DESC LIMIT 1",
        {node});
    j["fingerprint"] = fp.empty() ? nlohmann::json(nullptr) : fingerprint_json(fp[0]);
    j["certification"] = certification(node).to_json();
    // The latest result of each check on this node.
    const auto rows = m_db->query(std::string("SELECT ") + k_result_columns +
                                      " FROM results WHERE node = ? ORDER BY at DESC, id DESC",
                                  {node});
    nlohmann::json latest = nlohmann::json::array();
    std::set<std::string> seen;
    for (const auto& r : rows) {
        if (seen.insert(r[3].value_or("")).second)
            latest.push_back(result_json(r));
    }
    j["latest"] = std::move(latest);
    j["known"] = !rows.empty() || !fp.empty();
    return j;
}

nlohmann::json Ledger::history(const std::vector<std::string>& nodes, const std::string& since,
                               int limit) {
    nlohmann::json out = nlohmann::json::array();
    std::string sql = std::string("SELECT ") + k_result_columns + " FROM results WHERE at >= ?";
    std::vector<Value> params = {since};
    if (!nodes.empty()) {
        sql += " AND node IN (";
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            sql += i ? ", ?" : "?";
            params.emplace_back(nodes[i]);
        }
        sql += ")";
    }
    sql += " ORDER BY at DESC, id DESC LIMIT " + std::to_string(std::max(1, limit));
    for (const auto& r : m_db->query(sql, params))
        out.push_back(result_json(r));
    return out;
}

nlohmann::json Ledger::diff(const std::string& node) {
    nlohmann::json j = {{"node", node}};
    const auto certs = m_db->query(
        "SELECT c.run_id, c.at, c.verdict, c.identity_digest, c.software_digest FROM "
        "certifications c WHERE c.node = ? ORDER BY c.at DESC, c.id DESC LIMIT 2",
        {node});
    auto fingerprint_by_digest = [&](const Value& identity,
                                     const Value& software) -> std::optional<Fingerprint> {
        if (!identity)
            return std::nullopt;
        const auto rows = m_db->query(
            "SELECT identity, software FROM fingerprints WHERE node = ? AND identity_digest = ? "
            "AND software_digest = ? ORDER BY id DESC LIMIT 1",
            {node, identity, software});
        if (rows.empty())
            return std::nullopt;
        return fingerprint_row(rows[0], 0);
    };
    auto side = [](const Row& c) {
        return nlohmann::json{{"run_id", c[0].value_or("")},
                              {"at", c[1].value_or("")},
                              {"verdict", c[2].value_or("")}};
    };
    std::optional<Fingerprint> before, after;
    std::string from_run, to_run;
    if (certs.size() == 2) {
        j["from"] = side(certs[1]);
        j["to"] = side(certs[0]);
        before = fingerprint_by_digest(certs[1][3], certs[1][4]);
        after = fingerprint_by_digest(certs[0][3], certs[0][4]);
        from_run = certs[1][0].value_or("");
        to_run = certs[0][0].value_or("");
    } else if (certs.size() == 1) {
        // One certification: compare it with the node as last seen.
        j["from"] = side(certs[0]);
        j["to"] = {{"run_id", "latest"}};
        before = fingerprint_by_digest(certs[0][3], certs[0][4]);
        after = latest_fingerprint(node);
        from_run = certs[0][0].value_or("");
    } else {
        j["error"] = "no certification recorded for " + node;
        return j;
    }
    nlohmann::json changes = nlohmann::json::array();
    if (before && after) {
        for (const auto& c : fingerprint_changes(*before, *after))
            changes.push_back({{"key", c.key}, {"from", c.from}, {"to", c.to}});
    }
    j["fingerprint_known"] = before.has_value() && after.has_value();
    j["changes"] = std::move(changes);
    // The judged figures of the two runs, check by check.
    auto figures = [&](const std::string& run) {
        std::map<std::string, double> out;
        if (run.empty())
            return out;
        for (const auto& r : m_db->query("SELECT check_name, value FROM results WHERE node = ? "
                                         "AND run_id = ? AND value IS NOT NULL",
                                         {node, run}))
            out[r[0].value_or("")] = std::stod(r[1].value_or("0"));
        return out;
    };
    const auto a = figures(from_run);
    const auto b = figures(to_run);
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto& [check, value] : a) {
        nlohmann::json m = {{"check", check}, {"from", value}};
        if (auto it = b.find(check); it != b.end()) {
            m["to"] = it->second;
            if (value != 0.0)
                m["change_fraction"] = (it->second - value) / value;
        }
        metrics.push_back(std::move(m));
    }
    j["figures"] = std::move(metrics);
    return j;
}

}  // namespace preflight::ledger
