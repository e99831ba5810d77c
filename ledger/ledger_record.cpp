// Ledger::record: one run in one transaction, as a few multi-row INSERTs whatever the node count.
#include <cmath>
#include <set>

#include "core/build_info.hpp"
#include "core/log_text.hpp"
#include "ledger/ledger.hpp"

namespace preflight::ledger {

namespace {

Value text(const std::string& s) {
    return s;
}
// JSON text for a column. A string that is not valid UTF-8 (a local check's output, in a prolog)
// is replaced, not thrown: PostgreSQL refuses invalid UTF-8, and the run's record must not fail.
std::string json_text(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
Value number(double v) {
    if (!std::isfinite(v))
        return std::nullopt;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
}

nlohmann::json reference_json(const outcome::NodeCheck& c) {
    if (c.reference_basis.empty())
        return nullptr;
    nlohmann::json j = {{"basis", c.reference_basis},
                        {"metric", c.judged_metric},
                        {"cohort", c.cohort},
                        {"cohort_size", c.cohort_size.value_or(0)}};
    if (c.median)
        j["median"] = *c.median;
    if (c.mad)
        j["mad"] = *c.mad;
    if (c.threshold)
        j["threshold"] = *c.threshold;
    if (c.floor)
        j["floor"] = *c.floor;
    return j;
}

// The fingerprint this node reported in this run (node.fingerprint passed), or none.
Fingerprint node_fingerprint(const outcome::NodeReport& n) {
    for (const auto& c : n.checks) {
        if (c.check == "node.fingerprint" && c.verdict == core::Verdict::pass)
            return fingerprint_from_facts(c.facts);
    }
    return {};
}

struct Latest {
    std::string identity;
    std::string software;
};

std::map<std::string, Latest> latest_digests(Db& db) {
    std::map<std::string, Latest> out;
    const auto rows = db.query(
        "SELECT f.node, f.identity_digest, f.software_digest FROM fingerprints f JOIN "
        "(SELECT node, max(id) AS id FROM fingerprints GROUP BY node) m ON f.id = m.id");
    for (const auto& row : rows)
        if (row[0])
            out[*row[0]] = {row[1].value_or(""), row[2].value_or("")};
    return out;
}

// Rows of one table, inserted in batches inside the run's transaction as they are made, so that a
// run of 16 384 nodes is never held whole in memory.
class RowSink {
  public:
    RowSink(Db& db, std::string table, std::vector<std::string> columns)
        : m_db(db), m_table(std::move(table)), m_columns(std::move(columns)) {}

    void add(Row row) {
        m_rows.push_back(std::move(row));
        ++m_count;
        if (m_rows.size() >= k_flush_rows) {
            flush();
        }
    }
    void flush() {
        m_db.insert_rows(m_table, m_columns, m_rows);
        m_rows.clear();
    }
    int count() const { return m_count; }

  private:
    static constexpr std::size_t k_flush_rows = 1000;
    Db& m_db;
    std::string m_table;
    std::vector<std::string> m_columns;
    std::vector<Row> m_rows;
    int m_count = 0;
};

}  // namespace

RecordSummary Ledger::record(const outcome::RunReport& report, const RecordOptions& options) {
    if (!valid_kind(options.kind))
        throw DbError("ledger: unknown kind '" + options.kind + "' (gate, certify, prolog)");
    if (report.run_id.empty())
        throw DbError("ledger: the report has no run_id");
    RecordSummary summary;
    Transaction tx(*m_db);
    if (!m_db->query("SELECT 1 FROM runs WHERE run_id = ?", {report.run_id}).empty()) {
        summary.already = true;
        return summary;  // rolled back: nothing was written
    }
    const std::string at = report.finished_at.empty() ? utc_now() : report.finished_at;
    m_db->exec(
        "INSERT INTO runs (run_id, kind, started_at, finished_at, launcher, exit_code, "
        "preflight_version, nodes, recorded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {report.run_id, options.kind, text(report.started_at), at, text(report.launcher),
         std::to_string(report.exit_code),
         report.preflight_version.empty() ? std::string(core::build_version())
                                          : report.preflight_version,
         std::to_string(report.nodes.size()), text(options.recorded_by)});

    const auto latest = latest_digests(*m_db);
    RowSink fingerprints(*m_db, "fingerprints",
                         {"node", "identity_digest", "software_digest", "identity", "software",
                          "first_seen", "run_id"});
    RowSink results(*m_db, "results",
                    {"run_id", "node", "kind", "check_name", "verdict", "undecided", "metric",
                     "value", "metrics", "reference", "detail", "seconds", "at", "identity_digest",
                     "software_digest", "cached"});
    RowSink certifications(
        *m_db, "certifications",
        {"node", "run_id", "at", "verdict", "identity_digest", "software_digest", "detail"});
    for (const auto& n : report.nodes) {
        const Fingerprint fp = node_fingerprint(n);
        Value identity_digest, software_digest;
        if (!fp.empty()) {
            identity_digest = fp.identity_digest();
            software_digest = fp.software_digest();
            auto it = latest.find(n.name);
            if (it == latest.end() || it->second.identity != *identity_digest ||
                it->second.software != *software_digest) {
                fingerprints.add({n.name, identity_digest, software_digest, json_text(fp.identity),
                                  json_text(fp.software), at, report.run_id});
            }
        }
        for (const auto& c : n.checks) {
            Value value;
            if (!c.judged_metric.empty()) {
                if (auto m = c.metrics.find(c.judged_metric); m != c.metrics.end())
                    value = number(m->second);
            }
            const auto reference = reference_json(c);
            results.add(
                {report.run_id, n.name, options.kind, c.check,
                 std::string(core::to_string(c.verdict)), std::string(core::to_string(c.undecided)),
                 c.judged_metric.empty() ? Value{} : text(c.judged_metric), value,
                 json_text(c.metrics), reference.is_null() ? Value{} : text(json_text(reference)),
                 core::escape_invalid_utf8(c.detail),
                 c.seconds > 0.0 ? number(c.seconds) : Value{}, at, identity_digest,
                 software_digest, c.cached ? "1" : "0"});
        }
        if (options.kind == k_kind_certify && !n.reference) {
            std::optional<core::Verdict> verdict;
            if (auto it = options.certifications.find(n.name); it != options.certifications.end())
                verdict = it->second;
            else if (options.certifications.empty() && options.certify_by_verdict &&
                     (n.verdict == core::Verdict::pass || n.verdict == core::Verdict::fail))
                verdict = n.verdict;
            if (verdict && (*verdict == core::Verdict::pass || *verdict == core::Verdict::fail)) {
                std::string detail = n.reasons.empty() ? "" : n.reasons.front();
                certifications.add({n.name, report.run_id, at,
                                    std::string(core::to_string(*verdict)), identity_digest,
                                    software_digest, detail});
            }
        }
    }
    fingerprints.flush();
    results.flush();
    certifications.flush();
    tx.commit();
    summary.results = results.count();
    summary.fingerprints = fingerprints.count();
    summary.certifications = certifications.count();
    return summary;
}

}  // namespace preflight::ledger
