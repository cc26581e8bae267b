// Client schema migrations on PostgreSQL, serialized across processes by an advisory lock.
#include "pg_schema.hpp"

#include <stdexcept>
#include <string>

namespace exactly::client {

void pg_migrate(pg::connection& db, std::string_view component,
                std::span<const sqlite::migration> steps) {
  pg::transaction tx(db);
  // Held until the transaction ends; keyed by schema, so tests in schemas of their own never wait.
  db.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/exactly.migrate'))");
  db.exec(
      "CREATE TABLE IF NOT EXISTS exactly_schema_version ("
      " component TEXT PRIMARY KEY, version BIGINT NOT NULL)");
  int current = static_cast<int>(
      db.query_int64("SELECT version FROM exactly_schema_version WHERE component = $1", component)
          .value_or(0));
  const int latest = steps.empty() ? 0 : steps.back().version;
  if (current > latest) {
    throw std::runtime_error("schema of " + std::string(component) + " is version " +
                             std::to_string(current) + ", newer than this build's " +
                             std::to_string(latest));
  }
  const int recorded = current;
  for (const sqlite::migration& m : steps) {
    if (m.version <= current)
      continue;
    if (m.version != current + 1)
      throw std::runtime_error("migrations of " + std::string(component) + " skip a version");
    db.exec(m.sql);
    current = m.version;
  }
  if (current == recorded)
    return;  // up to date: the transaction rolls back, nothing written
  db.query(
      "INSERT INTO exactly_schema_version(component, version) VALUES($1, $2)"
      " ON CONFLICT(component) DO UPDATE SET version = excluded.version",
      component, current);
  tx.commit();
}

}  // namespace exactly::client
