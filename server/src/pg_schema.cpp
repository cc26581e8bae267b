// The server's PostgreSQL schema. The tables mirror the SQLite ones (sqlite_schema.cpp); what
// comes from the wire or from users' exceptions is BYTEA, so any byte is stored as it came.
#include "pg_schema.hpp"

namespace exactly::server {
namespace {

constexpr pg::migration schema[] = {
    {1,
     "CREATE TABLE exactly_interactions ("
     " route TEXT NOT NULL,"
     " id TEXT NOT NULL,"
     " owner TEXT NOT NULL,"
     " id_ms BIGINT NOT NULL,"
     " state SMALLINT NOT NULL,"    // 1 staged, 2 executed, 3 tombstone
     " tombstone_reason SMALLINT,"  // 1 deleted, 2 expired, 3 response-expired
     " state_since_ms BIGINT NOT NULL,"
     " request_content_type BYTEA,"
     " request_body BYTEA,"
     " request_sha256 BYTEA,"
     " response_status INTEGER,"
     " response_content_type BYTEA,"
     " response_body BYTEA,"
     " PRIMARY KEY (route, id));"
     "CREATE INDEX exactly_interactions_by_state ON exactly_interactions(state, state_since_ms);"
     "CREATE INDEX exactly_interactions_by_owner ON exactly_interactions(owner, state);"
     "CREATE TABLE exactly_server_outbox ("
     " seq BIGSERIAL PRIMARY KEY,"
     " type TEXT NOT NULL,"
     " body TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " created_ms BIGINT NOT NULL,"
     " attempts INTEGER NOT NULL DEFAULT 0,"
     " next_attempt_ms BIGINT NOT NULL DEFAULT 0,"
     " last_error BYTEA);"
     "CREATE TABLE exactly_server_dead_letters ("
     " seq BIGINT PRIMARY KEY,"
     " type TEXT NOT NULL,"
     " body TEXT NOT NULL,"
     " source TEXT NOT NULL,"
     " created_ms BIGINT NOT NULL,"
     " attempts INTEGER NOT NULL,"
     " error BYTEA NOT NULL,"
     " failed_ms BIGINT NOT NULL);"},
    // Staged body bytes per owner for the byte budget: the size of each staged body, summed by an
    // index-only scan of the owner's staged rows.
    {2,
     "ALTER TABLE exactly_interactions ADD COLUMN request_bytes BIGINT;"
     "UPDATE exactly_interactions SET request_bytes = octet_length(request_body) WHERE state = 1;"
     "CREATE INDEX exactly_interactions_staged_bytes ON exactly_interactions(owner)"
     " INCLUDE (request_bytes) WHERE state = 1;"},
};

}  // namespace

std::span<const pg::migration> server_pg_schema() {
  return schema;
}

}  // namespace exactly::server
