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
    // Rows by kind (1 staged, 2 executed, 3 tombstone, 4 outbox, 5 dead letters), kept by
    // triggers in the transaction of every change, so /metrics reads five rows instead of
    // counting millions; and the protocol's persisted high-water time (protocol_clock.hpp).
    {3,
     "CREATE TABLE exactly_row_counts (kind INTEGER PRIMARY KEY, n INTEGER NOT NULL);"
     "INSERT INTO exactly_row_counts(kind, n) VALUES"
     " (1, (SELECT count(*) FROM exactly_interactions WHERE state = 1)),"
     " (2, (SELECT count(*) FROM exactly_interactions WHERE state = 2)),"
     " (3, (SELECT count(*) FROM exactly_interactions WHERE state = 3)),"
     " (4, (SELECT count(*) FROM exactly_server_outbox)),"
     " (5, (SELECT count(*) FROM exactly_server_dead_letters));"
     "CREATE TRIGGER exactly_count_insert AFTER INSERT ON exactly_interactions BEGIN"
     "  UPDATE exactly_row_counts SET n = n + 1 WHERE kind = new.state;"
     " END;"
     "CREATE TRIGGER exactly_count_move AFTER UPDATE OF state ON exactly_interactions"
     " WHEN old.state <> new.state BEGIN"
     "  UPDATE exactly_row_counts SET n = n - 1 WHERE kind = old.state;"
     "  UPDATE exactly_row_counts SET n = n + 1 WHERE kind = new.state;"
     " END;"
     "CREATE TRIGGER exactly_count_delete AFTER DELETE ON exactly_interactions BEGIN"
     "  UPDATE exactly_row_counts SET n = n - 1 WHERE kind = old.state;"
     " END;"
     "CREATE TRIGGER exactly_count_outbox_insert AFTER INSERT ON exactly_server_outbox BEGIN"
     "  UPDATE exactly_row_counts SET n = n + 1 WHERE kind = 4;"
     " END;"
     "CREATE TRIGGER exactly_count_outbox_delete AFTER DELETE ON exactly_server_outbox BEGIN"
     "  UPDATE exactly_row_counts SET n = n - 1 WHERE kind = 4;"
     " END;"
     "CREATE TRIGGER exactly_count_dead_insert AFTER INSERT ON exactly_server_dead_letters BEGIN"
     "  UPDATE exactly_row_counts SET n = n + 1 WHERE kind = 5;"
     " END;"
     "CREATE TRIGGER exactly_count_dead_delete AFTER DELETE ON exactly_server_dead_letters BEGIN"
     "  UPDATE exactly_row_counts SET n = n - 1 WHERE kind = 5;"
     " END;"
     "CREATE TABLE exactly_clock ("
     " one INTEGER PRIMARY KEY CHECK (one = 1), high_water_ms INTEGER NOT NULL);"
     "INSERT INTO exactly_clock VALUES (1, 0);"},
    // Staged body bytes per owner beside the count, for the byte budget, kept by the same triggers.
    {4,
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
