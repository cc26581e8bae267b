// The server's SQLite schema: its migrations, applied in order (see sqlite_schema.hpp).
#include "sqlite_schema.hpp"

namespace exactly::server {
namespace {

constexpr sqlite::migration schema[] = {
    {1,
     "CREATE TABLE exactly_interactions ("
     " route TEXT NOT NULL,"
     " id TEXT NOT NULL,"
     " owner TEXT NOT NULL,"
     " id_ms INTEGER NOT NULL,"
     " state INTEGER NOT NULL,"    // 1 staged, 2 executed, 3 tombstone
     " tombstone_reason INTEGER,"  // 1 deleted, 2 expired, 3 response-expired
     " state_since_ms INTEGER NOT NULL,"
     " request_content_type TEXT,"
     " request_body BLOB,"
     " request_sha256 BLOB,"
     " response_status INTEGER,"
     " response_content_type TEXT,"
     " response_body BLOB,"
     " PRIMARY KEY (route, id));"
     "CREATE INDEX exactly_interactions_by_state ON exactly_interactions(state, state_since_ms);"
     "CREATE INDEX exactly_interactions_by_owner ON exactly_interactions(owner, state);"
     "CREATE TABLE exactly_server_outbox ("
     " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
     " type TEXT NOT NULL,"
     " body TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " created_ms INTEGER NOT NULL,"
     " attempts INTEGER NOT NULL DEFAULT 0,"
     " next_attempt_ms INTEGER NOT NULL DEFAULT 0,"
     " last_error TEXT);"
     "CREATE TABLE exactly_server_dead_letters ("
     " seq INTEGER PRIMARY KEY,"
     " type TEXT NOT NULL,"
     " body TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " created_ms INTEGER NOT NULL,"
     " attempts INTEGER NOT NULL,"
     " error TEXT NOT NULL,"
     " failed_ms INTEGER NOT NULL);"},
    // Staged requests per owner, kept by triggers in the same transaction as every change, so the
    // per-principal limit costs one lookup per PUT instead of a count over the owner's rows.
    {2,
     "CREATE TABLE exactly_staged_counts ("
     " owner TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;"
     "INSERT INTO exactly_staged_counts(owner, n)"
     " SELECT owner, count(*) FROM exactly_interactions WHERE state = 1 GROUP BY owner;"
     "CREATE TRIGGER exactly_staged_insert AFTER INSERT ON exactly_interactions"
     " WHEN new.state = 1 BEGIN"
     "  INSERT INTO exactly_staged_counts(owner, n) VALUES (new.owner, 1)"
     "  ON CONFLICT(owner) DO UPDATE SET n = n + 1;"
     " END;"
     "CREATE TRIGGER exactly_staged_leave AFTER UPDATE OF state ON exactly_interactions"
     " WHEN old.state = 1 AND new.state <> 1 BEGIN"
     "  UPDATE exactly_staged_counts SET n = n - 1 WHERE owner = old.owner;"
     " END;"
     "CREATE TRIGGER exactly_staged_delete AFTER DELETE ON exactly_interactions"
     " WHEN old.state = 1 BEGIN"
     "  UPDATE exactly_staged_counts SET n = n - 1 WHERE owner = old.owner;"
     " END;"},
    // Staged body bytes per owner beside the count, for the byte budget, kept by the same triggers.
    {3,
     "ALTER TABLE exactly_staged_counts ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;"
     "UPDATE exactly_staged_counts SET bytes = (SELECT coalesce(sum(length(CAST(i.request_body AS"
     " BLOB))), 0) FROM exactly_interactions i WHERE i.owner = exactly_staged_counts.owner AND"
     " i.state = 1);"
     "DROP TRIGGER exactly_staged_insert;"
     "DROP TRIGGER exactly_staged_leave;"
     "DROP TRIGGER exactly_staged_delete;"
     "CREATE TRIGGER exactly_staged_insert AFTER INSERT ON exactly_interactions"
     " WHEN new.state = 1 BEGIN"
     "  INSERT INTO exactly_staged_counts(owner, n, bytes)"
     "  VALUES (new.owner, 1, coalesce(length(CAST(new.request_body AS BLOB)), 0))"
     "  ON CONFLICT(owner) DO UPDATE SET n = n + 1, bytes = bytes + excluded.bytes;"
     " END;"
     "CREATE TRIGGER exactly_staged_leave AFTER UPDATE OF state ON exactly_interactions"
     " WHEN old.state = 1 AND new.state <> 1 BEGIN"
     "  UPDATE exactly_staged_counts SET n = n - 1,"
     "  bytes = bytes - coalesce(length(CAST(old.request_body AS BLOB)), 0)"
     "  WHERE owner = old.owner;"
     " END;"
     "CREATE TRIGGER exactly_staged_delete AFTER DELETE ON exactly_interactions"
     " WHEN old.state = 1 BEGIN"
     "  UPDATE exactly_staged_counts SET n = n - 1,"
     "  bytes = bytes - coalesce(length(CAST(old.request_body AS BLOB)), 0)"
     "  WHERE owner = old.owner;"
     " END;"},
};

}  // namespace

std::span<const sqlite::migration> server_schema() {
  return schema;
}

}  // namespace exactly::server
