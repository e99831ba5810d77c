// The ledger's schema and its migrations. The database records its version in ledger_meta; opening
// a ledger applies the migrations it lacks, in order, each in its own transaction, and refuses a
// database written by a newer preflight (its tables may mean something this build does not know).
#pragma once

#include <string>
#include <vector>

#include "ledger/db.hpp"

namespace preflight::ledger {

struct Migration {
    int version = 0;
    std::string summary;
    // DDL, statements separated by ';'. `{id}` is the auto-numbered key of the backend
    // (INTEGER PRIMARY KEY AUTOINCREMENT, BIGSERIAL PRIMARY KEY), `{real}` a double column.
    std::string sql;
};

// This build's migrations, versions 1..n in order.
const std::vector<Migration>& migrations();
int current_schema_version();

// The database's schema version; 0 for an empty database.
int schema_version(Db& db);

// Applies what is missing of `list` (default: migrations()). Throws DbError for a database at a
// newer version than the list knows, or a database that is not a ledger (tables without
// ledger_meta). Safe when two processes open the same new database at once.
void migrate(Db& db, const std::vector<Migration>& list = migrations());

}  // namespace preflight::ledger
