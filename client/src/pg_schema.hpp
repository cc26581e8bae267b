#pragma once
// The client's schema migrations on PostgreSQL: the same numbered steps as on SQLite, recorded in
// exactly_schema_version, applied by one process at a time (an advisory lock per schema).

#include <exactly/common/migrations.hpp>
#include <exactly/common/postgres.hpp>

#include <span>
#include <string_view>

namespace exactly::client {

// Applies the steps of `component` newer than its recorded version, all in one transaction that
// holds a transaction-level advisory lock, so processes starting at once wait for each other
// instead of failing. Throws pg::error, and std::runtime_error if the schema is newer than `steps`.
void pg_migrate(pg::connection& db, std::string_view component,
                std::span<const sqlite::migration> steps);

}  // namespace exactly::client
