// The PostgreSQL engine's server outbox and dead letters (see pg_store.hpp).
#include "pg_store.hpp"

#include <string>
#include <vector>

namespace exactly::server {

void pg_store::outbox_add(std::string_view type, std::string_view body, std::string_view source,
                          std::int64_t now_ms) {
  db_.defer(  // as insert_staged
      "INSERT INTO exactly_server_outbox(type, body, source, created_ms, next_attempt_ms)"
      " VALUES($1, $2, $3, $4, 0)",
      type, body, source, now_ms);
}

std::vector<outbox_message> pg_store::outbox_due(std::int64_t now_ms, int limit,
                                                 std::int64_t max_seq) {
  const pg::result q = db_.query(
      "SELECT seq, type, body, source, attempts FROM exactly_server_outbox"
      " WHERE next_attempt_ms <= $1 AND seq <= $2 ORDER BY seq LIMIT $3",
      now_ms, max_seq, limit);
  std::vector<outbox_message> out;
  for (int i = 0; i < q.rows(); ++i) {
    out.push_back(
        {q.int64(i, 0), q.text(i, 1), q.text(i, 2), q.text(i, 3), static_cast<int>(q.int64(i, 4))});
  }
  return out;
}

bool pg_store::outbox_claim(std::int64_t seq, std::int64_t now_ms) {
  return db_.query(
                "SELECT seq FROM exactly_server_outbox WHERE seq = $1 AND next_attempt_ms <= $2"
                " FOR UPDATE SKIP LOCKED",
                seq, now_ms)
             .rows() == 1;
}

void pg_store::outbox_remove(std::int64_t seq) {
  db_.defer("DELETE FROM exactly_server_outbox WHERE seq = $1", seq);
}

void pg_store::outbox_retry_later(std::int64_t seq, std::int64_t next_attempt_ms,
                                  std::string_view error) {
  db_.defer(
      "UPDATE exactly_server_outbox SET attempts = attempts + 1, next_attempt_ms = $1,"
      " last_error = $2 WHERE seq = $3",
      next_attempt_ms, pg::bytes{error}, seq);
}

void pg_store::outbox_dead_letter(std::int64_t seq, std::string_view error, std::int64_t now_ms) {
  db_.defer(
      "INSERT INTO exactly_server_dead_letters(seq, type, body, source, created_ms, attempts,"
      " error, failed_ms) SELECT seq, type, body, source, created_ms, attempts + 1, $1::bytea, "
      "$2::bigint"
      " FROM exactly_server_outbox WHERE seq = $3",
      pg::bytes{error}, now_ms, seq);
  outbox_remove(seq);
}

std::int64_t pg_store::outbox_last_seq() {
  return db_.query_int64("SELECT max(seq) FROM exactly_server_outbox").value_or(0);
}

std::int64_t pg_store::outbox_pending() {
  return *db_.query_int64(
      "SELECT coalesce(sum(n), 0)::BIGINT FROM exactly_row_counts WHERE kind = 4");
}

std::int64_t pg_store::dead_letter_count() {
  return *db_.query_int64(
      "SELECT coalesce(sum(n), 0)::BIGINT FROM exactly_row_counts WHERE kind = 5");
}

}  // namespace exactly::server
