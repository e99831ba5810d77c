// The ledger's database connection: SQLite (one file, the default: nothing to set up) or
// PostgreSQL through libpq (one fleet ledger that several controllers and per-node prologs write).
// Statements are written once with `?` placeholders; the PostgreSQL backend numbers them ($1, $2,
// ...). Every value travels as a bound parameter and is never spliced into the SQL text.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace preflight::ledger {

enum class Backend { sqlite, postgres };

// A bound parameter or a column value: NULL or text. Numbers travel as text; both databases
// convert them to the column's type.
using Value = std::optional<std::string>;
using Row = std::vector<Value>;

// A failure of the database itself (cannot open or reach it, not a database, locked, wrong schema
// version): what() names the ledger (describe()) and the database's own message.
class DbError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Db {
  public:
    virtual ~Db() = default;
    virtual Backend backend() const = 0;
    // "sqlite /var/lib/preflight/ledger.sqlite" or "postgresql host=db port=5432 dbname=ledger":
    // what errors and reports name. Never a password.
    virtual std::string describe() const = 0;
    // One statement with `?` parameters. Throws DbError.
    void exec(const std::string& sql, const std::vector<Value>& params = {}) {
        run(sql, params, nullptr);
    }
    std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {}) {
        std::vector<Row> rows;
        run(sql, params, &rows);
        return rows;
    }
    // Inserts rows into table(columns) with multi-row INSERTs of up to a few hundred rows each:
    // one round trip per chunk, not per row (16 384 nodes' results in a few statements).
    // The rows' values are moved out (the caller's rows are left empty).
    void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                     std::vector<Row>& rows);

    void begin() { exec(backend() == Backend::sqlite ? "BEGIN IMMEDIATE" : "BEGIN"); }
    void commit() { exec("COMMIT"); }
    void rollback() noexcept;

  protected:
    // The backend: runs one statement, appending its rows to *rows when rows is not null.
    virtual void run(const std::string& sql, const std::vector<Value>& params,
                     std::vector<Row>* rows) = 0;
};

// "sqlite:PATH" or a plain PATH: SQLite (created when absent); "postgresql://..." or
// "postgres://..." (a libpq URI) or "postgresql:KEY=VALUE ...": PostgreSQL. Throws DbError naming
// the target when it cannot be opened or reached (PostgreSQL: within connect_timeout_s; SQLite:
// waits as long for a lock another writer holds).
std::unique_ptr<Db> open_db(const std::string& url, double connect_timeout_s = 10.0);

// What open_db would name for url, without opening it (a PostgreSQL URI's password removed).
std::string describe_url(const std::string& url);

// Rolls back unless commit() was called: a failed batch leaves the ledger as it was.
class Transaction {
  public:
    explicit Transaction(Db& db) : m_db(db) { m_db.begin(); }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction() {
        if (!m_done)
            m_db.rollback();
    }
    void commit() {
        m_db.commit();
        m_done = true;
    }

  private:
    Db& m_db;
    bool m_done = false;
};

namespace detail {
// busy_timeout_s: how long a writer waits for another writer's transaction.
std::unique_ptr<Db> open_sqlite(const std::string& path, double busy_timeout_s);
std::unique_ptr<Db> open_postgres(const std::string& conninfo, double connect_timeout_s);
// `?` -> $1, $2, ... outside quoted literals.
std::string number_placeholders(const std::string& sql);
}  // namespace detail

}  // namespace preflight::ledger
