// The PostgreSQL backend (libpq): one connection, text parameters ($1, $2, ...), a bounded connect
// timeout so an unreachable server costs a prolog seconds, not minutes.
#include <libpq-fe.h>

#include <cmath>

#include "ledger/db.hpp"

namespace preflight::ledger::detail {

namespace {

std::string first_line(const char* message) {
    std::string s = message ? message : "";
    const auto nl = s.find('\n');
    if (nl != std::string::npos)
        s.resize(nl);
    return s;
}

class PostgresDb final : public Db {
  public:
    PostgresDb(const std::string& conninfo, double connect_timeout_s) {
        const std::string timeout =
            std::to_string(std::max(1, static_cast<int>(std::ceil(connect_timeout_s))));
        // dbname is expanded as a URI or key=value string; its own settings override the
        // defaults before it (connect_timeout, application_name).
        const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
        const char* values[] = {timeout.c_str(), "preflight", conninfo.c_str(), nullptr};
        m_conn = PQconnectdbParams(keys, values, 1);
        m_where = describe_target();
        if (!m_conn || PQstatus(m_conn) != CONNECTION_OK) {
            const std::string why = m_conn ? first_line(PQerrorMessage(m_conn)) : "out of memory";
            PQfinish(m_conn);
            m_conn = nullptr;
            throw DbError("ledger " + describe() + ": cannot connect: " + why);
        }
        m_where = describe_target();
        // Notices (e.g. "relation already exists, skipping") are not errors; keep them out of
        // the controller's stderr.
        PQsetNoticeProcessor(
            m_conn, [](void*, const char*) {}, nullptr);
    }
    ~PostgresDb() override { PQfinish(m_conn); }
    PostgresDb(const PostgresDb&) = delete;
    PostgresDb& operator=(const PostgresDb&) = delete;

    Backend backend() const override { return Backend::postgres; }
    std::string describe() const override { return "postgresql " + m_where; }

  private:
    std::string describe_target() const {
        if (!m_conn)
            return "(no connection)";
        std::string host = PQhost(m_conn) ? PQhost(m_conn) : "";
        std::string port = PQport(m_conn) ? PQport(m_conn) : "";
        std::string db = PQdb(m_conn) ? PQdb(m_conn) : "";
        return "host=" + host + " port=" + port + " dbname=" + db;
    }

    void run(const std::string& sql, const std::vector<Value>& params,
             std::vector<Row>* rows) override {
        const std::string numbered = number_placeholders(sql);
        std::vector<const char*> values;
        values.reserve(params.size());
        for (const auto& p : params)
            values.push_back(p ? p->c_str() : nullptr);
        PGresult* res = PQexecParams(m_conn, numbered.c_str(), static_cast<int>(values.size()),
                                     nullptr, values.data(), nullptr, nullptr, 0);
        struct Clear {
            PGresult* r;
            ~Clear() { PQclear(r); }
        } clear{res};
        const auto status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
            throw DbError("ledger " + describe() + ": '" + sql.substr(0, 40) +
                          "': " + first_line(PQerrorMessage(m_conn)));
        }
        if (!rows || status != PGRES_TUPLES_OK)
            return;
        const int n = PQntuples(res);
        const int columns = PQnfields(res);
        rows->reserve(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
            Row row;
            row.reserve(static_cast<std::size_t>(columns));
            for (int c = 0; c < columns; ++c) {
                if (PQgetisnull(res, r, c)) {
                    row.emplace_back(std::nullopt);
                } else {
                    row.emplace_back(std::string(PQgetvalue(res, r, c),
                                                 static_cast<std::size_t>(PQgetlength(res, r, c))));
                }
            }
            rows->push_back(std::move(row));
        }
    }

    PGconn* m_conn = nullptr;
    std::string m_where;
};

}  // namespace

std::unique_ptr<Db> open_postgres(const std::string& conninfo, double connect_timeout_s) {
    return std::make_unique<PostgresDb>(conninfo, connect_timeout_s);
}

}  // namespace preflight::ledger::detail
