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
};

class sqlite_invocation_engine final : public invocation_engine {
 public:
  explicit sqlite_invocation_engine(sqlite::connection& db) : db_(db) {
    sqlite::migrate(db_, "exactly.client.invocations", schema);
  }

  void insert(const stored_invocation& row, int state, std::int64_t now_ms) override {
    db_.prepare(
           "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
           " created_ms) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        .bind_all(row.request_id, row.endpoint, row.url, row.follow_up, state, now_ms, now_ms)
        .run();
  }

  bool contains(std::string_view request_id) override {
    return db_.query_int64("SELECT 1 FROM exactly_invocations WHERE request_id = ?", request_id)
        .has_value();
  }

  std::vector<stored_invocation> due(int state, std::int64_t now_ms, int limit) override {
    auto& q = db_.prepare(
        "SELECT request_id, endpoint, url, follow_up, attempts FROM exactly_invocations"
        " WHERE state = ? AND due_ms <= ? ORDER BY due_ms LIMIT ?");
    q.bind_all(state, now_ms, limit);
    std::vector<stored_invocation> out;
    while (q.step())
      out.push_back({q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4))});
    q.reset();
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

 private:
  sqlite::connection& db_;
};

}  // namespace

std::unique_ptr<invocation_engine> make_sqlite_invocation_engine(sqlite::connection& db) {
  return std::make_unique<sqlite_invocation_engine>(db);
}

}  // namespace exactly::client
