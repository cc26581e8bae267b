// The committed invocations of invoke_http (exactly_invocations), moved by the lifecycle machine.
#include "invocation_store.hpp"

#include <exactly/common/migrations.hpp>

#include <stdexcept>

namespace exactly::client {
namespace {

constexpr sqlite::migration schema[] = {
    {1,
     "CREATE TABLE exactly_invocations ("
     " request_id TEXT PRIMARY KEY,"
     " endpoint TEXT NOT NULL,"
     " url TEXT NOT NULL,"
     " follow_up TEXT NOT NULL,"
     " state INTEGER NOT NULL,"
     " attempts INTEGER NOT NULL DEFAULT 0,"
     " due_ms INTEGER NOT NULL,"
     " last_error TEXT,"
     " created_ms INTEGER NOT NULL);"
     "CREATE INDEX exactly_invocations_due ON exactly_invocations(state, due_ms);"},
};

// The stored value of each stored state; the others never reach the table.
int stored(invocation_state s) {
  switch (s) {
    case invocation_state::post_pending:
      return 1;
    case invocation_state::awaiting_follow_up:
      return 2;
    case invocation_state::delete_pending:
      return 3;
    default:
      throw std::logic_error("invocation state " + std::string(name_of(s)) + " is not stored");
  }
}

}  // namespace

invocation_store::invocation_store(sqlite::connection& db) : db_(db) {
  sqlite::migrate(db_, "exactly.client.invocations", schema);
}

void invocation_store::add(const invocation_row& row, std::int64_t now_ms) {
  insert(row, invocation_state::post_pending, now_ms);
}

void invocation_store::add_cleanup(std::string_view request_id, std::string_view endpoint,
                                   std::string_view url, std::int64_t now_ms) {
  insert({std::string(request_id), std::string(endpoint), std::string(url), message{}, 0},
         invocation_state::delete_pending, now_ms);
}

void invocation_store::insert(const invocation_row& row, invocation_state s, std::int64_t now_ms) {
  const nlohmann::json follow_up = {{"id", row.follow_up.id},
                                    {"type", row.follow_up.type},
                                    {"headers", row.follow_up.headers},
                                    {"body", row.follow_up.body}};
  db_.prepare(
         "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
         " created_ms) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
      .bind_all(row.request_id, row.endpoint, row.url, follow_up.dump(), stored(s), now_ms, now_ms)
      .run();
}

bool invocation_store::contains(std::string_view request_id) {
  return db_.query_int64("SELECT 1 FROM exactly_invocations WHERE request_id = ?", request_id)
      .has_value();
}

std::vector<invocation_row> invocation_store::due(invocation_state s, std::int64_t now_ms,
                                                  int limit) {
  auto& q = db_.prepare(
      "SELECT request_id, endpoint, url, follow_up, attempts FROM exactly_invocations"
      " WHERE state = ? AND due_ms <= ? ORDER BY due_ms LIMIT ?");
  q.bind_all(stored(s), now_ms, limit);
  std::vector<invocation_row> out;
  while (q.step()) {
    const auto f = nlohmann::json::parse(q.text(3));
    out.push_back({q.text(0), q.text(1), q.text(2),
                   message{f.at("id"), f.at("type"), f.at("headers"), f.at("body")},
                   static_cast<int>(q.int64(4))});
  }
  q.reset();
  return out;
}

bool invocation_store::move_if_in(std::string_view request_id, invocation_state from,
                                  invocation_state to, std::int64_t due_ms) {
  db_.prepare(
         "UPDATE exactly_invocations SET state = ?, due_ms = ?, attempts = 0"
         " WHERE request_id = ? AND state = ?")
      .bind_all(stored(to), due_ms, request_id, stored(from))
      .run();
  return db_.changes() == 1;
}

void invocation_store::retry_later(std::string_view request_id, std::int64_t due_ms,
                                   std::string_view error) {
  db_.prepare(
         "UPDATE exactly_invocations SET attempts = attempts + 1, due_ms = ?, last_error = ?"
         " WHERE request_id = ?")
      .bind_all(due_ms, error, request_id)
      .run();
}

void invocation_store::remove(std::string_view request_id) {
  db_.prepare("DELETE FROM exactly_invocations WHERE request_id = ?").bind(1, request_id).run();
}

std::int64_t invocation_store::pending() {
  return *db_.query_int64("SELECT count(*) FROM exactly_invocations");
}

}  // namespace exactly::client
