// The committed invocations of invoke_http (exactly_invocations), in SQLite.
#include "invocation_store.hpp"

#include <exactly/common/migrations.hpp>
#include <exactly/common/sqlite.hpp>

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
    // Until when the server keeps the staged request and the stored response (Unix ms, NULL when
    // not known): from the Exactly-Once-Retention of the PUT's and the POST's answers.
    {2,
     "ALTER TABLE exactly_invocations ADD COLUMN staged_until_ms INTEGER;"
     "ALTER TABLE exactly_invocations ADD COLUMN response_until_ms INTEGER;"},
    // The body and Content-Type the invocation PUT, to stage it again under the same id when its
    // POST meets 404 (a crash took back the staged row). NULL in rows written before: their 404
    // stays a protocol fault (error queue), as it was when they were committed.
    {3,
     "ALTER TABLE exactly_invocations ADD COLUMN body BLOB;"
     "ALTER TABLE exactly_invocations ADD COLUMN content_type TEXT;"},
};

class sqlite_invocation_engine final : public invocation_engine {
 public:
  explicit sqlite_invocation_engine(sqlite::connection& db) : db_(db) {
    sqlite::migrate(db_, "exactly.client.invocations", schema);
  }

  void insert(const stored_invocation& row, int state, std::int64_t now_ms) override {
    auto& q = db_.prepare(
        "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
        " created_ms, body, content_type) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO "
        "NOTHING");
    q.bind_all(row.request_id, row.endpoint, row.url, row.follow_up, state, now_ms, now_ms);
    if (row.body) {
      // A std::string's data() is never null: an empty body is an empty blob, not NULL.
      q.bind_blob(8, *row.body).bind(9, row.content_type);
    } else {
      q.bind(8, nullptr).bind(9, nullptr);
    }
    q.run();
  }

  bool contains(std::string_view request_id) override {
    return db_.query_int64("SELECT 1 FROM exactly_invocations WHERE request_id = ?", request_id)
        .has_value();
  }

  std::vector<std::string> missing(const std::vector<std::string>& request_ids) override {
    std::vector<std::string> out;
    for (const std::string& id : request_ids) {
      if (!contains(id))
        out.push_back(id);
    }
    return out;
  }

  std::vector<stored_invocation> due(int state, std::int64_t now_ms, int limit) override {
    return read_due(state, now_ms, limit, "");
  }

  std::vector<stored_invocation> claim_due(std::string_view endpoint,
                                           const std::vector<int>& states, std::int64_t now_ms,
                                           int limit) override {
    std::vector<stored_invocation> out;  // the caller's write lock keeps others out
    for (const int state : states) {
      for (stored_invocation& r : read_due(state, now_ms, limit, endpoint)) {
        r.state = state;
        out.push_back(std::move(r));
      }
    }
    return out;
  }

  bool move_if_in(std::string_view request_id, int from, int to, std::int64_t due_ms) override {
    db_.prepare(
           "UPDATE exactly_invocations SET state = ?, due_ms = ?, attempts = 0"
           " WHERE request_id = ? AND state = ?")
        .bind_all(to, due_ms, request_id, from)
        .run();
    return db_.changes() == 1;
  }

  void move_if_in_deferred(std::string_view request_id, int from, int to,
                           std::int64_t due_ms) override {
    move_if_in(request_id, from, to, due_ms);  // in-process: nothing to save by waiting
  }

  void retry_later(std::string_view request_id, std::int64_t due_ms,
                   std::string_view error) override {
    db_.prepare(
           "UPDATE exactly_invocations SET attempts = attempts + 1, due_ms = ?, last_error = ?"
           " WHERE request_id = ?")
        .bind_all(due_ms, error, request_id)
        .run();
  }

  void remove(std::string_view request_id) override {
    db_.prepare("DELETE FROM exactly_invocations WHERE request_id = ?").bind(1, request_id).run();
  }

  std::int64_t pending() override {
    return *db_.query_int64("SELECT count(*) FROM exactly_invocations");
  }

  std::optional<stored_invocation> find(std::string_view request_id) override {
    auto& q = db_.prepare(
        "SELECT request_id, endpoint, url, follow_up, attempts, state, last_error,"
        " staged_until_ms, response_until_ms FROM exactly_invocations WHERE request_id = ?");
    q.bind(1, request_id);
    std::optional<stored_invocation> out;
    if (q.step()) {
      out = stored_invocation{q.text(0), q.text(1), q.text(2), q.text(3),
                              static_cast<int>(q.int64(4))};
      out->state = static_cast<int>(q.int64(5));
      if (!q.is_null(6))
        out->last_error = q.text(6);
      if (!q.is_null(7))
        out->staged_until_ms = q.int64(7);
      if (!q.is_null(8))
        out->response_until_ms = q.int64(8);
    }
    q.reset();
    return out;
  }

  void record_staged_until(std::string_view request_id, std::int64_t until_ms) override {
    db_.prepare("UPDATE exactly_invocations SET staged_until_ms = ? WHERE request_id = ?")
        .bind_all(until_ms, request_id)
        .run();
  }

  void record_response_until(std::string_view request_id, std::int64_t until_ms) override {
    db_.prepare("UPDATE exactly_invocations SET response_until_ms = ? WHERE request_id = ?")
        .bind_all(until_ms, request_id)
        .run();
  }

 private:
  // Up to `limit` rows in `state` due at `now_ms`, oldest first (rows due at once in the order
  // they were added), of `endpoint` only unless it is empty.
  std::vector<stored_invocation> read_due(int state, std::int64_t now_ms, int limit,
                                          std::string_view endpoint) {
    auto& q = db_.prepare(
        "SELECT request_id, endpoint, url, follow_up, attempts, body, content_type"
        " FROM exactly_invocations WHERE state = ?1 AND due_ms <= ?2"
        " AND (?4 = '' OR endpoint = ?4) ORDER BY due_ms, rowid LIMIT ?3");
    q.bind_all(state, now_ms, limit, endpoint);
    std::vector<stored_invocation> out;
    while (q.step()) {
      out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4))});
      if (!q.is_null(5)) {
        out.back().body = q.text(5);
        out.back().content_type = q.is_null(6) ? "" : q.text(6);
      }
    }
    q.reset();
    return out;
  }

  sqlite::connection& db_;
};

}  // namespace

std::unique_ptr<invocation_engine> make_sqlite_invocation_engine(sqlite::connection& db) {
  return std::make_unique<sqlite_invocation_engine>(db);
}

}  // namespace exactly::client
