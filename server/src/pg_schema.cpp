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
    // Rows by kind (1 staged, 2 executed, 3 tombstone, 4 outbox, 5 dead letters), kept by
    // triggers in the transaction of every change, so /metrics sums a few rows instead of
    // counting millions. Each connection adds to its own shard of each kind's counter (the one
    // it claimed since migration 6), so connections do not wait on one another's counter rows.
    // And the protocol's persisted high-water time (protocol_clock.hpp).
    {2,
     "CREATE TABLE exactly_row_counts ("
     " kind SMALLINT NOT NULL, shard SMALLINT NOT NULL, n BIGINT NOT NULL,"
     " PRIMARY KEY (kind, shard));"
     "INSERT INTO exactly_row_counts(kind, shard, n)"
     " SELECT k, 0, 0 FROM generate_series(1, 5) AS k;"
     "UPDATE exactly_row_counts c SET n = s.n FROM (SELECT state AS kind, count(*) AS n"
     " FROM exactly_interactions GROUP BY state) s WHERE c.kind = s.kind AND c.shard = 0;"
     "UPDATE exactly_row_counts SET n = (SELECT count(*) FROM exactly_server_outbox)"
     " WHERE kind = 4 AND shard = 0;"
     "UPDATE exactly_row_counts SET n = (SELECT count(*) FROM exactly_server_dead_letters)"
     " WHERE kind = 5 AND shard = 0;"
     "CREATE FUNCTION exactly_count_add(k SMALLINT, d BIGINT) RETURNS void LANGUAGE sql AS $$"
     "  INSERT INTO exactly_row_counts(kind, shard, n) VALUES (k, pg_backend_pid() % 16, d)"
     "  ON CONFLICT (kind, shard) DO UPDATE SET n = exactly_row_counts.n + excluded.n $$;"
     "CREATE FUNCTION exactly_count_interactions() RETURNS trigger LANGUAGE plpgsql AS $$"
     " BEGIN"
     "  IF TG_OP = 'INSERT' THEN PERFORM exactly_count_add(NEW.state, 1);"
     "  ELSIF TG_OP = 'DELETE' THEN PERFORM exactly_count_add(OLD.state, -1);"
     "  ELSIF OLD.state <> NEW.state THEN"
     "   PERFORM exactly_count_add(OLD.state, -1); PERFORM exactly_count_add(NEW.state, 1);"
     "  END IF;"
     "  RETURN NULL;"
     " END $$;"
     "CREATE FUNCTION exactly_count_table() RETURNS trigger LANGUAGE plpgsql AS $$"
     " BEGIN"
     "  PERFORM exactly_count_add(TG_ARGV[0]::SMALLINT,"
     "   CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END);"
     "  RETURN NULL;"
     " END $$;"
     "CREATE TRIGGER exactly_count AFTER INSERT OR DELETE OR UPDATE OF state"
     " ON exactly_interactions FOR EACH ROW EXECUTE FUNCTION exactly_count_interactions();"
     "CREATE TRIGGER exactly_count AFTER INSERT OR DELETE ON exactly_server_outbox"
     " FOR EACH ROW EXECUTE FUNCTION exactly_count_table('4');"
     "CREATE TRIGGER exactly_count AFTER INSERT OR DELETE ON exactly_server_dead_letters"
     " FOR EACH ROW EXECUTE FUNCTION exactly_count_table('5');"
     "CREATE TABLE exactly_clock ("
     " one SMALLINT PRIMARY KEY CHECK (one = 1), high_water_ms BIGINT NOT NULL);"
     "INSERT INTO exactly_clock VALUES (1, 0);"},
    // Staged body bytes per owner for the byte budget: the size of each staged body, summed by an
    // index-only scan of the owner's staged rows.
    {3,
     "ALTER TABLE exactly_interactions ADD COLUMN request_bytes BIGINT;"
     "UPDATE exactly_interactions SET request_bytes = octet_length(request_body) WHERE state = 1;"
     "CREATE INDEX exactly_interactions_staged_bytes ON exactly_interactions(owner)"
     " INCLUDE (request_bytes) WHERE state = 1;"},
    // The row counters' upsert in PL/pgSQL, whose plan a session keeps: as a SQL function it was
    // parsed and planned again at each of a request's trigger calls.
    {4,
     "CREATE OR REPLACE FUNCTION exactly_count_add(k SMALLINT, d BIGINT) RETURNS void"
     " LANGUAGE plpgsql AS $$ BEGIN"
     "  INSERT INTO exactly_row_counts(kind, shard, n) VALUES (k, pg_backend_pid() % 16, d)"
     "  ON CONFLICT (kind, shard) DO UPDATE SET n = exactly_row_counts.n + excluded.n;"
     " END $$;"},
    // A staged row executed, or an error if it is not staged: sent with the request's RELEASE,
    // whose failure then reports it (pg_store::mark_executed).
    {5,
     "CREATE FUNCTION exactly_mark_executed(p_route TEXT, p_id TEXT, p_now_ms BIGINT,"
     " p_status INTEGER, p_content_type BYTEA, p_body BYTEA) RETURNS void"
     " LANGUAGE plpgsql AS $$ BEGIN"
     "  UPDATE exactly_interactions SET state = 2, state_since_ms = p_now_ms,"
     "   response_status = p_status, response_content_type = p_content_type,"
     "   response_body = p_body, request_body = NULL"
     "   WHERE route = p_route AND id = p_id AND state = 1;"
     "  IF NOT FOUND THEN"
     "   RAISE EXCEPTION 'mark_executed: interaction % % is not staged', p_route, p_id"
     "    USING ERRCODE = 'XX000';"
     "  END IF;"
     " END $$;"},
    // The shard a connection claimed when it connected (pg_store::with_counter_shard), unique
    // among live connections, instead of its pid modulo 16, which two connections could share.
    {6,
     "CREATE OR REPLACE FUNCTION exactly_count_add(k SMALLINT, d BIGINT) RETURNS void"
     " LANGUAGE plpgsql AS $$ BEGIN"
     "  INSERT INTO exactly_row_counts(kind, shard, n) VALUES (k,"
     "   coalesce(nullif(current_setting('exactly.shard', true), '')::SMALLINT,"
     "    pg_backend_pid() % 64), d)"
     "  ON CONFLICT (kind, shard) DO UPDATE SET n = exactly_row_counts.n + excluded.n;"
     " END $$;"},
    // The counters without an upsert (their trigger calls had taken 1.3 s of the 3.3 s the
    // server's statements ran in a profiled e2e run): the row of every kind in every shard is
    // made here (a shard is always one of 0 to 63), so a change adds by a plain UPDATE, and a
    // change of state moves its one between two kinds in one statement. A row missing all the
    // same (removed by hand) is made again, by an upsert, by the change that finds it gone.
    {7,
     "INSERT INTO exactly_row_counts(kind, shard, n) SELECT k, s, 0"
     " FROM generate_series(1, 5) k, generate_series(0, 63) s ON CONFLICT (kind, shard) DO NOTHING;"
     "CREATE OR REPLACE FUNCTION exactly_count_shard() RETURNS SMALLINT LANGUAGE plpgsql STABLE"
     " AS $$ DECLARE s INTEGER := nullif(current_setting('exactly.shard', true), '')::INTEGER;"
     " BEGIN"
     "  IF s IS NULL OR s NOT BETWEEN 0 AND 63 THEN s := pg_backend_pid() % 64; END IF;"
     "  RETURN s;"
     " END $$;"
     "CREATE OR REPLACE FUNCTION exactly_count_add(k SMALLINT, d BIGINT) RETURNS void"
     " LANGUAGE plpgsql AS $$ BEGIN"
     "  UPDATE exactly_row_counts SET n = n + d WHERE kind = k AND shard = exactly_count_shard();"
     "  IF NOT FOUND THEN"
     "   INSERT INTO exactly_row_counts(kind, shard, n) VALUES (k, exactly_count_shard(), d)"
     "   ON CONFLICT (kind, shard) DO UPDATE SET n = exactly_row_counts.n + excluded.n;"
     "  END IF;"
     " END $$;"
     "CREATE OR REPLACE FUNCTION exactly_count_interactions() RETURNS trigger LANGUAGE plpgsql AS "
     "$$ DECLARE moved INTEGER;"
     " BEGIN"
     "  IF TG_OP = 'INSERT' THEN PERFORM exactly_count_add(NEW.state, 1);"
     "  ELSIF TG_OP = 'DELETE' THEN PERFORM exactly_count_add(OLD.state, -1);"
     "  ELSIF OLD.state <> NEW.state THEN"
     "   UPDATE exactly_row_counts SET n = n + CASE WHEN kind = NEW.state THEN 1 ELSE -1 END"
     "    WHERE kind IN (OLD.state, NEW.state) AND shard = exactly_count_shard();"
     "   GET DIAGNOSTICS moved = ROW_COUNT;"
     "   IF moved < 2 THEN"  // one of the two rows is gone: undone, then each added on its own
     "    UPDATE exactly_row_counts SET n = n - CASE WHEN kind = NEW.state THEN 1 ELSE -1 END"
     "     WHERE kind IN (OLD.state, NEW.state) AND shard = exactly_count_shard();"
     "    PERFORM exactly_count_add(OLD.state, -1);"
     "    PERFORM exactly_count_add(NEW.state, 1);"
     "   END IF;"
     "  END IF;"
     "  RETURN NULL;"
     " END $$;"},
    // The server's own sessions count the rows they change in their transaction's COMMIT, one
    // statement for all of it (pg_store.cpp), and say so by exactly.inline_counts = 'on'; the
    // trigger counts what other sessions change (a hand, a server older than this migration).
    // The writes of 20 wire cycles in one transaction take about 30 % less database time so
    // than with the trigger updating a counter row at each (pgbench, one connection).
    {8,
     "DROP TRIGGER exactly_count ON exactly_interactions;"
     "CREATE TRIGGER exactly_count AFTER INSERT OR DELETE OR UPDATE OF state"
     " ON exactly_interactions FOR EACH ROW"
     " WHEN (current_setting('exactly.inline_counts', true) IS DISTINCT FROM 'on')"
     " EXECUTE FUNCTION exactly_count_interactions();"},
};

}  // namespace

std::span<const pg::migration> server_pg_schema() {
  return schema;
}

}  // namespace exactly::server
