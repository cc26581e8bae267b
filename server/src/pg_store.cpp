// The PostgreSQL engine of the storage contract: its statements, locks, transactions and sweep.
#include "pg_store.hpp"

#include "pg_schema.hpp"

#include <string>

namespace exactly::server {
namespace {

class pg_transaction final : public store_transaction {
 public:
  explicit pg_transaction(pg::connection& db) : tx_(db) {}
  void commit() override { tx_.commit(); }
  void commit_later(std::function<void(std::exception_ptr)> on_failed) override {
    tx_.commit_later(std::move(on_failed));
  }

 private:
  pg::transaction tx_;
};

// The columns both lookups start with, in this order: what a decision needs.
constexpr std::string_view facts_columns =
    "owner, state, tombstone_reason, state_since_ms, request_content_type, request_sha256";

constexpr std::string_view staged_load_query =
    "SELECT count(*), coalesce(sum(request_bytes), 0)::bigint FROM exactly_interactions"
    " WHERE owner = $1 AND state = 1";
constexpr std::string_view clock_floor_query = "SELECT high_water_ms FROM exactly_clock";

// What a transaction changed in the rows of each kind (its tallies), added to the connection's
// shard of the counters in its COMMIT's round trip; a counter row removed by hand is made again.
constexpr std::size_t staged_kind = 1, executed_kind = 2, tombstone_kind = 3;
constexpr std::string_view count_rows_query =
    "INSERT INTO exactly_row_counts(kind, shard, n) SELECT k, exactly_count_shard(), d"
    " FROM (VALUES (1, $1::BIGINT), (2, $2::BIGINT), (3, $3::BIGINT)) v(k, d) WHERE d <> 0"
    " ON CONFLICT (kind, shard) DO UPDATE SET n = exactly_row_counts.n + excluded.n";

// The facts of row 0 of `q`, read from facts_columns.
template <class Record>
Record facts_of(const pg::result& q) {
  Record r;
  r.owner = q.text(0, 0);
  r.state = static_cast<id_state>(q.int64(0, 1));
  if (!q.is_null(0, 2))
    r.reason = static_cast<tombstone_reason>(q.int64(0, 2));
  r.state_since_ms = q.int64(0, 3);
  r.request_content_type = q.text(0, 4);
  r.request_sha256 = q.text(0, 5);
  return r;
}

}  // namespace

pg::options pg_store::with_counter_shard(pg::options opts) {
  // The first shard no live connection holds (a session advisory lock, released when the
  // connection ends), so that no two connections add to one counter row and wait on each other
  // (or deadlock, when two transactions add to two kinds in crossing order); past 64 connections
  // at once, one by the backend's pid. And the session counts the rows it changes (migration 8),
  // but for a migration's, which the trigger counts as it does any other session's.
  opts.session_setup =
      "SELECT set_config('exactly.shard', coalesce((SELECT s FROM generate_series(0, 63) s"
      " WHERE pg_try_advisory_lock(1702388067, s) LIMIT 1), pg_backend_pid() % 64)::TEXT, false),"
      " set_config('exactly.inline_counts', 'on', false)";
  return opts;
}

pg_store::pg_store(pg::options opts, std::chrono::milliseconds lock_timeout)
    : db_([&] {
        opts.session_setup =
            "SELECT set_config('default_transaction_read_only', 'on', false),"
            " set_config('lock_timeout', '" +
            std::to_string(lock_timeout.count()) + "ms', false)";
        return std::move(opts);
      }()) {}

pg_store::pg_store(pg::options opts) : db_(with_counter_shard(std::move(opts))) {
  try {
    db_.exec("SELECT set_config('exactly.inline_counts', 'off', false)");
    pg::migrate(db_, "exactly.server", server_pg_schema());
    db_.exec("SELECT set_config('exactly.inline_counts', 'on', false)");
  } catch (const pg::error& e) {
    throw pg::error(e.sqlstate(), std::string("cannot create the server's tables: ") + e.what());
  }
  db_.on_commit_tallies([](pg::connection& c, const pg::tally_totals& t) {
    c.defer(count_rows_query, t[1], t[2], t[3]);
  });
}

std::unique_ptr<store_transaction> pg_store::begin(bool write) {
  auto tx = std::make_unique<pg_transaction>(db_);
  write_ = write;
  return tx;
}

void pg_store::lock_id(std::string_view route, std::string_view id) {
  std::string key(route);
  key += ' ';
  key += id;
  db_.defer("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", key);  // sent with the lookup
}

void pg_store::after_commit(std::function<void()> hook) {
  db_.after_commit(std::move(hook));
}

std::optional<interaction_record> pg_store::find(std::string_view route, std::string_view id) {
  static const std::string select =
      "SELECT " + std::string(facts_columns) +
      ", id_ms, request_body, response_status, response_content_type, response_body"
      " FROM exactly_interactions WHERE route = $1 AND id = $2";
  static const std::string for_update = select + " FOR UPDATE";
  const pg::result q = db_.query(write_ ? for_update : select, route, id);
  if (q.rows() == 0)
    return std::nullopt;
  auto r = facts_of<interaction_record>(q);
  r.id_ms = q.int64(0, 6);
  r.request_body = q.text(0, 7);
  if (!q.is_null(0, 8))
    r.response.status = static_cast<unsigned>(q.int64(0, 8));
  r.response.content_type = q.text(0, 9);
  r.response.body = q.text(0, 10);
  return r;
}

const std::string& pg_store::facts_query() const {
  static const std::string select = "SELECT " + std::string(facts_columns) +
                                    " FROM exactly_interactions WHERE route = $1 AND id = $2";
  static const std::string for_update = select + " FOR UPDATE";
  return write_ ? for_update : select;
}

std::optional<record_facts> pg_store::find_facts(std::string_view route, std::string_view id) {
  const pg::result q = db_.query(facts_query(), route, id);
  if (q.rows() == 0)
    return std::nullopt;
  return facts_of<record_facts>(q);
}

staged_load pg_store::staged_of(std::string_view owner) {
  const pg::result q = db_.query(staged_load_query, owner);
  return {q.int64(0, 0), q.int64(0, 1)};
}

put_lookup pg_store::find_for_put(std::string_view route, std::string_view id,
                                  std::string_view owner) {
  // One round trip (with the lock ahead of it); each statement reads after the one before, as
  // the three calls would (READ COMMITTED: a snapshot of its own each).
  const std::vector<pg::result> q =
      db_.query_together({pg::bound(facts_query(), route, id), pg::bound(clock_floor_query),
                          pg::bound(staged_load_query, owner)});
  put_lookup l;
  if (q[0].rows() > 0)
    l.known = facts_of<record_facts>(q[0]);
  l.clock_floor = q[1].rows() == 0 || q[1].is_null(0, 0) ? 0 : q[1].int64(0, 0);
  l.load = {q[2].int64(0, 0), q[2].int64(0, 1)};
  return l;
}

void pg_store::insert_staged(std::string_view route, std::string_view id, std::string_view owner,
                             std::int64_t id_ms, std::int64_t now_ms, std::string_view content_type,
                             std::string_view body, std::string_view sha256) {
  db_.defer(  // its failure is reported by the COMMIT or RELEASE it goes with
      "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, state_since_ms,"
      " request_content_type, request_body, request_sha256, request_bytes) VALUES($1, $2, $3, $4,"
      " 1, $5, $6, $7, $8, $9)",
      route, id, owner, id_ms, now_ms, pg::bytes{content_type}, pg::bytes{body}, pg::bytes{sha256},
      static_cast<std::int64_t>(body.size()));
  db_.tally(staged_kind, 1);
}

void pg_store::mark_executed(std::string_view route, std::string_view id,
                             const stored_response& response, std::int64_t now_ms) {
  // Reported by the RELEASE or COMMIT it goes with if the row is not staged (SQLSTATE XX000).
  db_.defer("SELECT exactly_mark_executed($1, $2, $3, $4, $5, $6)", route, id, now_ms,
            response.status, pg::bytes{response.content_type}, pg::bytes{response.body});
  db_.tally(staged_kind, -1);
  db_.tally(executed_kind, 1);
}

void pg_store::put_tombstone(std::string_view route, std::string_view id, std::string_view owner,
                             std::int64_t id_ms, tombstone_reason reason, std::int64_t now_ms,
                             std::optional<id_state> was) {
  db_.defer(  // as insert_staged
      "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, tombstone_reason,"
      " state_since_ms) VALUES($1, $2, $3, $4, 3, $5, $6)"
      " ON CONFLICT(route, id) DO UPDATE SET state = 3,"
      " tombstone_reason = excluded.tombstone_reason, state_since_ms = excluded.state_since_ms,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL,"
      " response_status = NULL, response_content_type = NULL, response_body = NULL",
      route, id, owner, id_ms, static_cast<int>(reason), now_ms);
  if (was && *was != id_state::tombstone)
    db_.tally(static_cast<std::size_t>(*was), -1);
  if (was != id_state::tombstone)
    db_.tally(tombstone_kind, 1);
}

sweep_result pg_store::sweep(std::int64_t now_ms, const timing& t) {
  // Each step takes only rows no other transaction holds (SKIP LOCKED): a request deciding on
  // an id, or another instance's sweeper. A row skipped now is swept next time.
  sweep_result r;
  r.expired_staged = db_.execute(
      "UPDATE exactly_interactions SET state = 3, tombstone_reason = 2, state_since_ms = $1,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL"
      " WHERE state = 1 AND (route, id) IN (SELECT route, id FROM exactly_interactions"
      " WHERE state = 1 AND state_since_ms <= $2 FOR UPDATE SKIP LOCKED)",
      now_ms, now_ms - t.staged_ttl_ms);
  r.expired_responses = db_.execute(
      "UPDATE exactly_interactions SET state = 3, tombstone_reason = 3, state_since_ms = $1,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL,"
      " response_status = NULL, response_content_type = NULL, response_body = NULL"
      " WHERE state = 2 AND (route, id) IN (SELECT route, id FROM exactly_interactions"
      " WHERE state = 2 AND state_since_ms <= $2 FOR UPDATE SKIP LOCKED)",
      now_ms, now_ms - t.response_retention_ms);
  // Same rule as tombstone_purgeable().
  const std::int64_t horizon = now_ms - t.acceptance_window_ms;
  r.purged_tombstones = db_.execute(
      "DELETE FROM exactly_interactions WHERE state = 3 AND (route, id) IN (SELECT route, id"
      " FROM exactly_interactions WHERE state = 3 AND state_since_ms < $1"
      " AND (id_ms < $1 OR id_ms > state_since_ms + $2) FOR UPDATE SKIP LOCKED)",
      horizon, t.max_future_skew_ms);
  db_.tally(staged_kind, -r.expired_staged);
  db_.tally(executed_kind, -r.expired_responses);
  db_.tally(tombstone_kind, r.expired_staged + r.expired_responses - r.purged_tombstones);
  return r;  // space: PostgreSQL's autovacuum reuses it
}

state_counts pg_store::counts() {
  state_counts c;
  const pg::result q = db_.query(
      "SELECT kind, sum(n)::BIGINT FROM exactly_row_counts WHERE kind IN (1, 2, 3) GROUP BY kind");
  for (int i = 0; i < q.rows(); ++i)
    set_count(c, q.int64(i, 0), q.int64(i, 1));
  return c;
}

std::int64_t pg_store::clock_floor() {
  return db_.query_int64(clock_floor_query).value_or(0);
}

void pg_store::raise_clock_floor(std::int64_t ms) {
  db_.defer("UPDATE exactly_clock SET high_water_ms = $1 WHERE high_water_ms < $1", ms);
}

}  // namespace exactly::server
