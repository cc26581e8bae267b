// Schema migrations applied in order, each once, recorded per component in the database
// (SQLite and PostgreSQL).
#include <exactly/common/migrations.hpp>

#include <stdexcept>
#include <string>

namespace exactly::sqlite {
namespace {

void ensure_table(connection& db) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS exactly_schema_version ("
      " component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
}

}  // namespace

int schema_version(connection& db, std::string_view component) {
  ensure_table(db);
  auto& q = db.prepare("SELECT version FROM exactly_schema_version WHERE component = ?");
  q.bind(1, component);
  const int v = q.step() ? static_cast<int>(q.int64(0)) : 0;
  q.reset();
  return v;
}

void migrate(connection& db, std::string_view component, std::span<const migration> steps) {
  ensure_table(db);
  for (const migration& m : steps) {
    transaction tx(db);
    const int current = schema_version(db, component);
    const int latest = steps.empty() ? 0 : steps.back().version;
    if (current > latest) {
      throw std::runtime_error("schema of " + std::string(component) + " is version " +
                               std::to_string(current) + ", newer than this build's " +
                               std::to_string(latest));
    }
    if (m.version <= current)
      continue;  // tx rolls back, nothing written
    if (m.version != current + 1) {
      throw std::runtime_error("migrations of " + std::string(component) + " skip a version");
    }
    db.exec(m.sql);
    db.prepare(
          "INSERT INTO exactly_schema_version(component, version) VALUES(?, ?)"
          " ON CONFLICT(component) DO UPDATE SET version = excluded.version")
        .bind_all(component, m.version)
        .run();
    tx.commit();
  }
}

}  // namespace exactly::sqlite

namespace exactly::pg {

void migrate(connection& db, std::string_view component, std::span<const migration> steps) {
  transaction tx(db);
  // Held until the transaction ends; keyed by schema, so schemas of their own never wait.
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
  for (const migration& m : steps) {
    if (m.version <= current)
      continue;
    if (m.version != current + 1)
      throw std::runtime_error("migrations of " + std::string(component) + " skip a version");
    db.exec(m.sql);
    current = m.version;
  }
  if (current == recorded)
    return;  // up to date: the transaction rolls back, nothing written
  db.execute(
      "INSERT INTO exactly_schema_version(component, version) VALUES($1, $2)"
      " ON CONFLICT(component) DO UPDATE SET version = excluded.version",
      component, current);
  tx.commit();
}

}  // namespace exactly::pg
