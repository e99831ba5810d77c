// The SQLite backend: one file, WAL journal so readers never block the writer, a busy timeout so
// two controllers writing at once take turns instead of failing, and prepared statements cached
// by their text (a run's inserts reuse a handful of statements).
#include <sqlite3.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "ledger/db.hpp"

namespace preflight::ledger::detail {

namespace {

class SqliteDb final : public Db {
  public:
    SqliteDb(std::string path, double busy_timeout_s) : m_path(std::move(path)) {
        const int rc = sqlite3_open_v2(m_path.c_str(), &m_db,
                                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
        if (rc != SQLITE_OK) {
            std::string why = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
            sqlite3_close(m_db);
            m_db = nullptr;
            throw DbError("ledger " + describe() + ": cannot open: " + why);
        }
        // How long a writer waits for another writer's transaction before "database is locked".
        sqlite3_busy_timeout(m_db,
                             static_cast<int>(std::clamp(busy_timeout_s, 0.0, 3600.0) * 1000));
        try {
            // The first statement reads the header: a file that is not a database fails here.
            query("PRAGMA journal_mode=WAL", {});
            exec("PRAGMA synchronous=NORMAL", {});
        } catch (...) {
            close();
            throw;
        }
    }
    ~SqliteDb() override { close(); }
    SqliteDb(const SqliteDb&) = delete;
    SqliteDb& operator=(const SqliteDb&) = delete;

    Backend backend() const override { return Backend::sqlite; }
    std::string describe() const override { return "sqlite " + m_path; }

  private:
    void close() noexcept {
        for (auto& [sql, stmt] : m_statements)
            sqlite3_finalize(stmt);
        m_statements.clear();
        sqlite3_close(m_db);
        m_db = nullptr;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw DbError("ledger " + describe() + ": " + what + ": " + sqlite3_errmsg(m_db));
    }

    // The statement for sql, and whether it stays cached (else the caller finalizes it).
    std::pair<sqlite3_stmt*, bool> prepare(const std::string& sql) {
        auto it = m_statements.find(sql);
        if (it != m_statements.end())
            return {it->second, true};
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
            SQLITE_OK)
            fail("cannot prepare '" + sql.substr(0, 60) + "'");
        // Multi-row INSERTs differ by row count; only cache the statements that repeat.
        if (m_statements.size() >= 64)
            return {stmt, false};
        m_statements.emplace(sql, stmt);
        return {stmt, true};
    }

    void run(const std::string& sql, const std::vector<Value>& params,
             std::vector<Row>* rows) override {
        const auto [stmt, cached] = prepare(sql);
        struct Reset {
            sqlite3_stmt* s;
            bool cached;
            ~Reset() {
                if (cached) {
                    sqlite3_reset(s);
                    sqlite3_clear_bindings(s);
                } else {
                    sqlite3_finalize(s);
                }
            }
        } reset{stmt, cached};
        if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt))
            throw DbError("ledger " + describe() + ": " + std::to_string(params.size()) +
                          " values for the parameters of '" + sql.substr(0, 60) + "'");
        for (std::size_t i = 0; i < params.size(); ++i) {
            const int index = static_cast<int>(i) + 1;
            const int rc =
                // SQLITE_STATIC: params outlive the statement's steps (bindings are cleared after).
                params[i] ? sqlite3_bind_text(stmt, index, params[i]->data(),
                                              static_cast<int>(params[i]->size()), SQLITE_STATIC)
                          : sqlite3_bind_null(stmt, index);
            if (rc != SQLITE_OK)
                fail("cannot bind");
        }
        const int columns = sqlite3_column_count(stmt);
        for (;;) {
            const int rc = sqlite3_step(stmt);
            if (rc == SQLITE_DONE)
                return;
            if (rc != SQLITE_ROW)
                fail(sql.substr(0, 40));
            if (!rows)
                continue;
            Row row;
            row.reserve(static_cast<std::size_t>(columns));
            for (int c = 0; c < columns; ++c) {
                if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
                    row.emplace_back(std::nullopt);
                } else {
                    const auto* text = sqlite3_column_text(stmt, c);
                    row.emplace_back(
                        std::string(reinterpret_cast<const char*>(text),
                                    static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
                }
            }
            rows->push_back(std::move(row));
        }
    }

    std::string m_path;
    sqlite3* m_db = nullptr;
    std::unordered_map<std::string, sqlite3_stmt*> m_statements;
};

}  // namespace

std::unique_ptr<Db> open_sqlite(const std::string& path, double busy_timeout_s) {
    if (path.empty())
        throw DbError("ledger: sqlite: no file name given");
    return std::make_unique<SqliteDb>(path, busy_timeout_s);
}

}  // namespace preflight::ledger::detail
