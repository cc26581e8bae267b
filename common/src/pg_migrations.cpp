// Schema migrations on PostgreSQL, serialized between processes by a session advisory lock.
#include <exactly/common/pg_migrations.hpp>

#include <stdexcept>
#include <string>

namespace exactly::pg {
namespace {

// Holds the advisory lock every process takes to migrate, for the scope's duration.
class migration_lock {
 public:
  explicit migration_lock(connection& db) : db_(db) {
    db_.exec("SELECT pg_advisory_lock(hashtext('exactly.schema'))");
  }
  ~migration_lock() {
    try {
      db_.exec("SELECT pg_advisory_unlock(hashtext('exactly.schema'))");
    } catch (const std::exception&) {  // a lost connection released it already
    }
  }
  migration_lock(const migration_lock&) = delete;
  migration_lock& operator=(const migration_lock&) = delete;

 private:
  connection& db_;
};

}  // namespace

void migrate(connection& db, std::string_view component, std::span<const migration> steps) {
  const migration_lock lock(db);
  db.exec(
      "CREATE TABLE IF NOT EXISTS exactly_schema_version ("
      " component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
  const int latest = steps.empty() ? 0 : steps.back().version;
  for (const migration& m : steps) {
    transaction tx(db);
    const int current = static_cast<int>(
        db.query_int64("SELECT version FROM exactly_schema_version WHERE component = $1", component)
            .value_or(0));
    if (current > latest) {
      throw std::runtime_error("schema of " + std::string(component) + " is version " +
                               std::to_string(current) + ", newer than this build's " +
                               std::to_string(latest));
    }
    if (m.version <= current)
      continue;
    if (m.version != current + 1)
      throw std::runtime_error("migrations of " + std::string(component) + " skip a version");
    db.exec(m.sql);
    db.execute(
        "INSERT INTO exactly_schema_version(component, version) VALUES($1, $2)"
        " ON CONFLICT(component) DO UPDATE SET version = excluded.version",
        component, m.version);
    tx.commit();
  }
}

}  // namespace exactly::pg
