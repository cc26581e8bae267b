#pragma once
// Schema migrations on PostgreSQL, as sqlite::migrate: a version table per component, each step
// in its own transaction. Processes that start at once take turns (an advisory lock).

#include <exactly/common/postgres.hpp>

#include <span>
#include <string_view>

namespace exactly::pg {

struct migration {
  int version;           // 1, 2, 3, ... in order
  std::string_view sql;  // statements that move the schema from version-1 to version
};

// Applies the migrations of `component` newer than its recorded version. Throws error on failure
// (nothing half-applied; missing privileges say so), std::runtime_error if the database is newer
// than the code.
void migrate(connection& db, std::string_view component, std::span<const migration> steps);

}  // namespace exactly::pg
