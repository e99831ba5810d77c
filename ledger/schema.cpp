#include "ledger/schema.hpp"

#include <regex>

namespace preflight::ledger {

namespace {

// Version 1. Times are RFC 3339 UTC text ("2026-11-26T14:02:15Z"): they sort as text and read
// the same in both databases. Metrics, references and fingerprints are JSON text.
//   runs            one row per run, prolog or certification that wrote to the ledger
//   fingerprints    a node's identity and software as first seen; a new row when either changes
//   results         every check result of every node of every run (the judged metric and its
//                   value, all metrics, the judge's reference, the fingerprint it ran under,
//                   whether it was reused from cache)
//   certifications  one row per node per certification, with the fingerprint it certified
const char* k_v1 = R"sql(
CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY, kind TEXT NOT NULL, started_at TEXT, finished_at TEXT NOT NULL,
  launcher TEXT, exit_code INTEGER, preflight_version TEXT, nodes INTEGER NOT NULL,
  recorded_by TEXT);
CREATE TABLE fingerprints (
  id {id}, node TEXT NOT NULL, identity_digest TEXT NOT NULL, software_digest TEXT NOT NULL,
  identity TEXT NOT NULL, software TEXT NOT NULL, first_seen TEXT NOT NULL, run_id TEXT NOT NULL);
CREATE INDEX fingerprints_node ON fingerprints (node, id);
CREATE TABLE results (
  id {id}, run_id TEXT NOT NULL, node TEXT NOT NULL, kind TEXT NOT NULL,
  check_name TEXT NOT NULL, verdict TEXT NOT NULL, undecided TEXT, metric TEXT, value {real},
  metrics TEXT NOT NULL,
  reference TEXT, detail TEXT, seconds {real}, at TEXT NOT NULL, identity_digest TEXT,
  software_digest TEXT, cached INTEGER NOT NULL);
CREATE INDEX results_node_at ON results (node, at);
CREATE INDEX results_check_at ON results (check_name, at);
CREATE TABLE certifications (
  id {id}, node TEXT NOT NULL, run_id TEXT NOT NULL, at TEXT NOT NULL, verdict TEXT NOT NULL,
  identity_digest TEXT, software_digest TEXT, detail TEXT);
CREATE INDEX certifications_node ON certifications (node, at)
)sql";

// Version 2: the fleet planner (`preflight run --budget-s`, fleet_history.cpp) reads each node's
// latest result and failures of a check over the window. The index on (check_name, at) becomes
// one that also holds what those queries read, so they scan the index alone: at 16 384 nodes and
// a million results, 0.26 s per check instead of 1.7 s (table lookups and a join). Same number of
// indexes to write.
const char* k_v2 = R"sql(
DROP INDEX IF EXISTS results_check_at;
CREATE INDEX IF NOT EXISTS results_check_cover
  ON results (check_name, at, node, verdict, cached, seconds)
)sql";

std::string dialect(const std::string& sql, Backend backend) {
    const bool lite = backend == Backend::sqlite;
    std::string out =
        std::regex_replace(sql, std::regex(R"(\{id\})"),
                           lite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY");
    return std::regex_replace(out, std::regex(R"(\{real\})"), lite ? "REAL" : "DOUBLE PRECISION");
}

std::vector<std::string> statements(const std::string& sql) {
    std::vector<std::string> out;
    std::string current;
    for (char c : sql) {
        if (c == ';') {
            if (current.find_first_not_of(" \n\t") != std::string::npos)
                out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (current.find_first_not_of(" \n\t") != std::string::npos)
        out.push_back(current);
    return out;
}

bool has_meta_table(Db& db) {
    const auto rows =
        db.backend() == Backend::sqlite
            ? db.query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                       {"ledger_meta"})
            : db.query(
                  "SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                  "current_schema() AND table_name = ?",
                  {"ledger_meta"});
    return !rows.empty() && rows[0][0] && *rows[0][0] != "0";
}

int count_tables(Db& db) {
    const auto rows = db.backend() == Backend::sqlite
                          ? db.query(
                                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                "name NOT LIKE 'sqlite_%'")
                          : db.query(
                                "SELECT count(*) FROM information_schema.tables WHERE "
                                "table_schema = current_schema()");
    return rows.empty() || !rows[0][0] ? 0 : std::stoi(*rows[0][0]);
}

int read_version(Db& db) {
    if (!has_meta_table(db)) {
        if (count_tables(db) > 0)
            throw DbError("ledger " + db.describe() +
                          ": not a preflight ledger (it has tables but no ledger_meta)");
        return 0;
    }
    const auto rows = db.query("SELECT value FROM ledger_meta WHERE key = 'schema_version'");
    if (rows.empty() || !rows[0][0])
        throw DbError("ledger " + db.describe() + ": ledger_meta has no schema_version");
    try {
        return std::stoi(*rows[0][0]);
    } catch (const std::exception&) {
        throw DbError("ledger " + db.describe() + ": schema_version '" + *rows[0][0] +
                      "' is not a number");
    }
}

}  // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> list = {
        {1, "runs, fingerprints, results, certifications", k_v1},
        {2, "results: a covering index for the fleet planner", k_v2},
    };
    return list;
}

int current_schema_version() {
    return migrations().back().version;
}

int schema_version(Db& db) {
    return read_version(db);
}

void migrate(Db& db, const std::vector<Migration>& list) {
    const int known = list.empty() ? 0 : list.back().version;
    const int found = read_version(db);
    if (found > known)
        throw DbError("ledger " + db.describe() + ": schema version " + std::to_string(found) +
                      " is newer than this preflight knows (" + std::to_string(known) +
                      "); upgrade preflight, or point --ledger at another database");
    if (found == known)
        return;
    for (const auto& m : list) {
        Transaction tx(db);
        // Another process may have migrated since we looked: decide again under the lock
        // (SQLite: BEGIN IMMEDIATE holds the write lock; PostgreSQL: an advisory lock).
        if (db.backend() == Backend::postgres)
            db.query("SELECT pg_advisory_xact_lock(7210315)");
        if (read_version(db) >= m.version)
            continue;
        for (const auto& statement : statements(dialect(m.sql, db.backend())))
            db.exec(statement);
        if (m.version == 1) {
            db.exec("INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?)",
                    {std::to_string(m.version)});
        } else {
            db.exec("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'",
                    {std::to_string(m.version)});
        }
        tx.commit();
    }
}

}  // namespace preflight::ledger
