#pragma once
// Schema migrations with a version table (exactly_schema_version), per component sharing one
// database: SQLite or PostgreSQL, the same numbered steps on both.

#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <span>
#include <string_view>

namespace exactly {

struct migration {
  int version;           // 1, 2, 3, ... in order
  std::string_view sql;  // statements that move the schema from version-1 to version
};

}  // namespace exactly

namespace exactly::sqlite {

using exactly::migration;

// Applies the migrations of `component` newer than its recorded version, each in its own
// transaction with the version bump. Throws error on failure (nothing half-applied), and
// std::runtime_error if the database is newer than the code.
void migrate(connection& db, std::string_view component, std::span<const migration> steps);

// The recorded schema version of `component`, 0 if none.
int schema_version(connection& db, std::string_view component);

}  // namespace exactly::sqlite

namespace exactly::pg {

using exactly::migration;

// Applies the migrations of `component` newer than its recorded version, all in one transaction
// holding an advisory lock per schema, so processes starting at once wait for each other instead
// of failing. Throws error on failure (nothing half-applied; missing privileges say so), and
// std::runtime_error if the database is newer than the code.
void migrate(connection& db, std::string_view component, std::span<const migration> steps);

}  // namespace exactly::pg
