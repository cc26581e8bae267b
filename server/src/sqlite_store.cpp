// The SQLite engine of the storage contract: its statements, transactions and sweep.
#include <exactly/common/migrations.hpp>

#include "sqlite_schema.hpp"
#include "sqlite_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace exactly::server {
namespace {

class sqlite_transaction final : public store_transaction {
 public:
  sqlite_transaction(sqlite::connection& db, bool write)
      : tx_(db,
            write ? sqlite::transaction::mode::immediate : sqlite::transaction::mode::deferred) {}
  void commit() override { tx_.commit(); }

 private:
  sqlite::transaction tx_;
};

}  // namespace

sqlite_store::sqlite_store(const std::string& path, sqlite::options opts, access a)
    : db_(path, opts) {
  if (a == access::read_only) {
    db_.exec("PRAGMA query_only=ON");
    return;
  }
  // A new database frees pages incrementally (see sweep()). SQLite takes the setting before the
  // first table only, and in WAL mode only through a VACUUM (of an empty file here).
  if (*db_.query_int64("SELECT count(*) FROM sqlite_master") == 0) {
    db_.exec("PRAGMA auto_vacuum=INCREMENTAL");
    db_.exec("VACUUM");
  }
  sqlite::migrate(db_, "exactly.server", server_schema());
}

std::unique_ptr<store_transaction> sqlite_store::begin(bool write) {
  return std::make_unique<sqlite_transaction>(db_, write);
}

void sqlite_store::after_commit(std::function<void()> hook) {
  db_.after_commit(std::move(hook));
}

namespace {

// The columns both lookups start with, in this order: what a decision needs.
constexpr std::string_view facts_columns =
    "owner, state, tombstone_reason, state_since_ms, request_content_type, request_sha256";

// The row of (route, id) that `sql` selects, starting with facts_columns and read further by
// `more`; nullopt when there is none.
template <class Record, class More>
std::optional<Record> lookup(sqlite::connection& db, const std::string& sql, std::string_view route,
                             std::string_view id, More more) {
  auto& q = db.prepare(sql);
  q.bind_all(route, id);
  std::optional<Record> r;
  if (q.step()) {
    r.emplace();
    r->owner = q.text(0);
    r->state = static_cast<id_state>(q.int64(1));
    if (!q.is_null(2))
      r->reason = static_cast<tombstone_reason>(q.int64(2));
    r->state_since_ms = q.int64(3);
    r->request_content_type = q.text(4);
    r->request_sha256 = q.text(5);
    more(q, *r);
  }
  q.reset();
  return r;
}

}  // namespace

std::optional<interaction_record> sqlite_store::find(std::string_view route, std::string_view id) {
  static const std::string sql =
      "SELECT " + std::string(facts_columns) +
      ", id_ms, request_body, response_status, response_content_type, response_body"
      " FROM exactly_interactions WHERE route = ? AND id = ?";
  return lookup<interaction_record>(db_, sql, route, id,
                                    [](const sqlite::statement& q, interaction_record& r) {
                                      r.id_ms = q.int64(6);
                                      r.request_body = q.text(7);
                                      if (!q.is_null(8))
                                        r.response.status = static_cast<unsigned>(q.int64(8));
                                      r.response.content_type = q.text(9);
                                      r.response.body = q.text(10);
                                    });
}

std::optional<record_facts> sqlite_store::find_facts(std::string_view route, std::string_view id) {
  static const std::string sql = "SELECT " + std::string(facts_columns) +
                                 " FROM exactly_interactions WHERE route = ? AND id = ?";
  return lookup<record_facts>(db_, sql, route, id, [](const sqlite::statement&, record_facts&) {});
}

staged_load sqlite_store::staged_of(std::string_view owner) {
  auto& q = db_.prepare("SELECT n, bytes FROM exactly_staged_counts WHERE owner = ?");
  q.bind_all(owner);
  staged_load load;
  if (q.step())
    load = {q.int64(0), q.int64(1)};
  q.reset();
  return load;
}

void sqlite_store::insert_staged(std::string_view route, std::string_view id,
                                 std::string_view owner, std::int64_t id_ms, std::int64_t now_ms,
                                 std::string_view content_type, std::string_view body,
                                 std::string_view sha256) {
  auto& q = db_.prepare(
      "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, state_since_ms,"
      " request_content_type, request_body, request_sha256) VALUES(?, ?, ?, ?, 1, ?, ?, ?, ?)");
  q.bind_all(route, id, owner, id_ms, now_ms, content_type);
  q.bind_blob(7, body).bind_blob(8, sha256);
  q.run();
}

void sqlite_store::mark_executed(std::string_view route, std::string_view id,
                                 const stored_response& response, std::int64_t now_ms) {
  auto& q = db_.prepare(
      "UPDATE exactly_interactions SET state = 2, state_since_ms = ?, response_status = ?,"
      " response_content_type = ?, response_body = ?, request_body = NULL"
      " WHERE route = ? AND id = ? AND state = 1");
  q.bind_all(now_ms, response.status, response.content_type);
  q.bind_blob(4, response.body);
  q.bind(5, route).bind(6, id);
  q.run();
  if (db_.changes() != 1)
    throw std::logic_error("mark_executed: interaction is not staged");
}

void sqlite_store::put_tombstone(std::string_view route, std::string_view id,
                                 std::string_view owner, std::int64_t id_ms,
                                 tombstone_reason reason, std::int64_t now_ms,
                                 std::optional<id_state> /*was: SQLite's triggers count*/) {
  auto& q = db_.prepare(
      "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, tombstone_reason,"
      " state_since_ms) VALUES(?, ?, ?, ?, 3, ?, ?)"
      " ON CONFLICT(route, id) DO UPDATE SET state = 3,"
      " tombstone_reason = excluded.tombstone_reason, state_since_ms = excluded.state_since_ms,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL,"
      " response_status = NULL, response_content_type = NULL, response_body = NULL");
  q.bind_all(route, id, owner, id_ms, static_cast<int>(reason), now_ms);
  q.run();
}

sweep_result sqlite_store::sweep(std::int64_t now_ms, const timing& t) {
  // Runs `sql` with parameters (a, b); returns the rows it changed.
  const auto changed = [this](std::string_view sql, std::int64_t a, std::int64_t b) {
    db_.prepare(sql).bind_all(a, b).run();
    return db_.changes();
  };
  sweep_result r;
  r.expired_staged = changed(
      "UPDATE exactly_interactions SET state = 3, tombstone_reason = 2, state_since_ms = ?,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL"
      " WHERE state = 1 AND state_since_ms <= ?",
      now_ms, now_ms - t.staged_ttl_ms);
  r.expired_responses = changed(
      "UPDATE exactly_interactions SET state = 3, tombstone_reason = 3, state_since_ms = ?,"
      " request_content_type = NULL, request_body = NULL, request_sha256 = NULL,"
      " response_status = NULL, response_content_type = NULL, response_body = NULL"
      " WHERE state = 2 AND state_since_ms <= ?",
      now_ms, now_ms - t.response_retention_ms);
  // Same rule as tombstone_purgeable().
  const std::int64_t horizon = now_ms - t.acceptance_window_ms;
  db_.prepare(
         "DELETE FROM exactly_interactions WHERE state = 3 AND state_since_ms < ?"
         " AND (id_ms < ? OR id_ms > state_since_ms + ?)")
      .bind_all(horizon, horizon, t.max_future_skew_ms)
      .run();
  r.purged_tombstones = db_.changes();
  // Free pages beyond a slack (an eighth of the pages in use) go back to the file system, so the
  // file follows the rows in flight and the window of tombstones instead of their highest count
  // ever.
  const std::int64_t free_pages = *db_.query_int64("PRAGMA freelist_count");
  const std::int64_t used = *db_.query_int64("PRAGMA page_count") - free_pages;
  const std::int64_t slack = std::max<std::int64_t>(64, used / 8);
  // At most 1024 pages (4 MiB) a sweep: the sweep may share a commit group with requests.
  const std::int64_t release = std::min<std::int64_t>(free_pages - slack, 1024);
  if (release > 0 && *db_.query_int64("PRAGMA auto_vacuum") == 2) {  // 2 = incremental
    db_.exec("PRAGMA incremental_vacuum(" + std::to_string(release) + ")");
    r.released_pages = free_pages - *db_.query_int64("PRAGMA freelist_count");
  }
  return r;
}

state_counts sqlite_store::counts() {
  state_counts c;
  auto& q = db_.prepare("SELECT kind, n FROM exactly_row_counts WHERE kind IN (1, 2, 3)");
  while (q.step())
    set_count(c, q.int64(0), q.int64(1));
  q.reset();
  return c;
}

std::int64_t sqlite_store::clock_floor() {
  return db_.query_int64("SELECT high_water_ms FROM exactly_clock").value_or(0);
}

void sqlite_store::raise_clock_floor(std::int64_t ms) {
  db_.prepare("UPDATE exactly_clock SET high_water_ms = ? WHERE high_water_ms < ?")
      .bind_all(ms, ms)
      .run();
}

void sqlite_store::outbox_add(std::string_view type, std::string_view body, std::string_view source,
                              std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_server_outbox(type, body, source, created_ms, next_attempt_ms)"
         " VALUES(?, ?, ?, ?, 0)")
      .bind_all(type, body, source, now_ms)
      .run();
}

std::vector<outbox_message> sqlite_store::outbox_due(std::int64_t now_ms, int limit,
                                                     std::int64_t max_seq) {
  auto& q = db_.prepare(
      "SELECT seq, type, body, source, attempts FROM exactly_server_outbox"
      " WHERE next_attempt_ms <= ? AND seq <= ? ORDER BY seq LIMIT ?");
  q.bind_all(now_ms, max_seq, limit);
  std::vector<outbox_message> out;
  while (q.step()) {
    out.push_back({q.int64(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4))});
  }
  q.reset();
  return out;
}

bool sqlite_store::outbox_claim(std::int64_t seq, std::int64_t now_ms) {
  return db_
      .query_int64("SELECT 1 FROM exactly_server_outbox WHERE seq = ? AND next_attempt_ms <= ?",
                   seq, now_ms)
      .has_value();
}

void sqlite_store::outbox_remove(std::int64_t seq) {
  db_.prepare("DELETE FROM exactly_server_outbox WHERE seq = ?").bind(1, seq).run();
}

void sqlite_store::outbox_retry_later(std::int64_t seq, std::int64_t next_attempt_ms,
                                      std::string_view error) {
  db_.prepare(
         "UPDATE exactly_server_outbox SET attempts = attempts + 1, next_attempt_ms = ?,"
         " last_error = ? WHERE seq = ?")
      .bind_all(next_attempt_ms, error, seq)
      .run();
}

void sqlite_store::outbox_dead_letter(std::int64_t seq, std::string_view error,
                                      std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_server_dead_letters(seq, type, body, source, created_ms, attempts,"
         " error, failed_ms) SELECT seq, type, body, source, created_ms, attempts + 1, ?, ?"
         " FROM exactly_server_outbox WHERE seq = ?")
      .bind_all(error, now_ms, seq)
      .run();
  outbox_remove(seq);
}

std::int64_t sqlite_store::outbox_last_seq() {
  return db_.query_int64("SELECT max(seq) FROM exactly_server_outbox").value_or(0);
}

std::int64_t sqlite_store::outbox_pending() {
  return db_.query_int64("SELECT n FROM exactly_row_counts WHERE kind = 4").value_or(0);
}

std::int64_t sqlite_store::dead_letter_count() {
  return db_.query_int64("SELECT n FROM exactly_row_counts WHERE kind = 5").value_or(0);
}

}  // namespace exactly::server
