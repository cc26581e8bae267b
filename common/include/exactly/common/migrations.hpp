#pragma once
// Schema migrations with a version table, per component sharing one database file.

#include <exactly/common/sqlite.hpp>

#include <span>
#include <string_view>

namespace exactly::sqlite {

struct migration {
  int version;           // 1, 2, 3, ... in order
  std::string_view sql;  // statements that move the schema from version-1 to version
};

// Applies the migrations of `component` newer than its recorded version, each in its own
// transaction with the version bump. Throws error on failure (nothing half-applied), and
// std::runtime_error if the database is newer than the code.
void migrate(connection& db, std::string_view component, std::span<const migration> steps);

// The recorded schema version of `component`, 0 if none.
int schema_version(connection& db, std::string_view component);

}  // namespace exactly::sqlite
