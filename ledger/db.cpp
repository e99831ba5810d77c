#include "ledger/db.hpp"

#include <algorithm>
#include <iterator>
#include <regex>

namespace preflight::ledger {

namespace {

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool is_postgres_url(const std::string& url) {
    return starts_with(url, "postgresql://") || starts_with(url, "postgres://") ||
           starts_with(url, "postgresql:");
}

// Rows per INSERT: SQLite allows 32 766 bound values per statement, PostgreSQL 65 535.
constexpr std::size_t k_rows_per_insert = 200;

}  // namespace

void Db::insert_rows(const std::string& table, const std::vector<std::string>& columns,
                     std::vector<Row>& rows) {
    if (rows.empty() || columns.empty())
        return;
    std::string head = "INSERT INTO " + table + " (";
    std::string one = "(";
    for (std::size_t i = 0; i < columns.size(); ++i) {
        head += (i ? ", " : "") + columns[i];
        one += i ? ", ?" : "?";
    }
    head += ") VALUES ";
    one += ")";
    for (std::size_t start = 0; start < rows.size(); start += k_rows_per_insert) {
        const std::size_t end = std::min(rows.size(), start + k_rows_per_insert);
        std::string sql = head;
        std::vector<Value> params;
        params.reserve((end - start) * columns.size());
        for (std::size_t r = start; r < end; ++r) {
            if (rows[r].size() != columns.size())
                throw DbError("ledger: row of " + std::to_string(rows[r].size()) + " values for " +
                              std::to_string(columns.size()) + " columns of " + table);
            sql += (r > start ? ", " : "") + one;
            std::move(rows[r].begin(), rows[r].end(), std::back_inserter(params));
        }
        exec(sql, params);
    }
    rows.clear();
}

void Db::rollback() noexcept {
    try {
        exec("ROLLBACK");
    } catch (...) {  // NOLINT(bugprone-empty-catch): the connection is gone; nothing was committed
    }
}

std::string describe_url(const std::string& url) {
    if (!is_postgres_url(url)) {
        return "sqlite " + (starts_with(url, "sqlite:") ? url.substr(7) : url);
    }
    // postgresql://user:password@host:port/db?params -> without the password.
    static const std::regex password(R"(^(postgres(?:ql)?://[^:/@]*):[^@]*@)");
    std::string shown = std::regex_replace(url, password, "$1@");
    static const std::regex kv_password(R"(password\s*=\s*\S+)");
    shown = std::regex_replace(shown, kv_password, "password=***");
    return "postgresql " + shown;
}

std::unique_ptr<Db> open_db(const std::string& url, double connect_timeout_s) {
    if (url.empty())
        throw DbError("ledger: no database given (--ledger sqlite:PATH or a URL)");
    if (is_postgres_url(url)) {
        std::string conninfo = starts_with(url, "postgresql:") && !starts_with(url, "postgresql://")
                                   ? url.substr(11)
                                   : url;
        return detail::open_postgres(conninfo, connect_timeout_s);
    }
    return detail::open_sqlite(starts_with(url, "sqlite:") ? url.substr(7) : url,
                               connect_timeout_s);
}

namespace detail {

std::string number_placeholders(const std::string& sql) {
    std::string out;
    out.reserve(sql.size() + 16);
    int n = 0;
    char quote = 0;
    for (char c : sql) {
        if (quote) {
            if (c == quote)
                quote = 0;
            out += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            out += c;
        } else if (c == '?') {
            out += '$' + std::to_string(++n);
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace detail

}  // namespace preflight::ledger
