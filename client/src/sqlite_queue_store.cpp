// Durable input queues and error queues of endpoints, in SQLite.
#include "queue_store.hpp"

#include <exactly/common/migrations.hpp>

#include <exactly/common/sqlite.hpp>
#include <iterator>

namespace exactly::client {
namespace {

// The columns of a queued message, shared by the queue and the error queue.
#define EXACTLY_MESSAGE_COLUMNS                                                               \
  " seq INTEGER PRIMARY KEY AUTOINCREMENT, endpoint TEXT NOT NULL, message_id TEXT NOT NULL," \
  " type TEXT NOT NULL, headers TEXT NOT NULL, body TEXT NOT NULL,"

constexpr sqlite::migration schema[] = {
    {1,
     "CREATE TABLE exactly_queue (" EXACTLY_MESSAGE_COLUMNS " attempts INTEGER NOT NULL DEFAULT 0,"
     " due_ms INTEGER NOT NULL,"
     " last_error TEXT,"
     " UNIQUE (endpoint, message_id));"
     "CREATE INDEX exactly_queue_due ON exactly_queue(endpoint, due_ms, seq);"
     "CREATE TABLE exactly_error_queue (" EXACTLY_MESSAGE_COLUMNS " attempts INTEGER NOT NULL,"
     " error TEXT NOT NULL,"
     " failed_ms INTEGER NOT NULL);"},
};
static_assert(std::size(schema) == queue_schema_version &&
              schema[std::size(schema) - 1].version == queue_schema_version);

message read_message(sqlite::statement& q, int first) {
  message m;
  m.id = q.text(first);
  m.type = q.text(first + 1);
  m.headers = nlohmann::json::parse(q.text(first + 2));
  m.body = nlohmann::json::parse(q.text(first + 3));
  return m;
}

class sqlite_queue_engine final : public queue_engine {
 public:
  explicit sqlite_queue_engine(sqlite::connection& db) : db_(db) {
    sqlite::migrate(db_, "exactly.client", schema);
  }
  bool enqueue(std::string_view endpoint, std::string_view id, const message& m,
               std::int64_t now_ms) override;
  std::vector<queued_message> due(std::string_view endpoint, std::int64_t now_ms,
                                  int limit) override;
  std::vector<queued_message> claim_due(std::string_view endpoint, std::int64_t now_ms,
                                        int limit) override {
    return due(endpoint, now_ms, limit);  // the caller's write lock keeps other workers out
  }
  std::optional<std::int64_t> next_due_ms(std::string_view endpoint) override;
  std::set<std::int64_t> claim_all(const std::vector<std::int64_t>& seqs,
                                   std::int64_t now_ms) override;
  void consume(std::int64_t seq) override;
  void retry_later(std::int64_t seq, std::int64_t retry_at_ms, std::string_view error) override;
  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms) override;
  void set_headers(std::int64_t seq, const nlohmann::json& headers) override;
  void add_error(std::string_view endpoint, const message& m, int attempts, std::string_view error,
                 std::int64_t now_ms) override;
  std::vector<error_entry> errors(std::string_view endpoint) override;
  bool requeue_error(std::int64_t error_seq, std::int64_t now_ms) override;
  std::int64_t queued(std::string_view endpoint) override;

 private:
  sqlite::connection& db_;
};

bool sqlite_queue_engine::enqueue(std::string_view endpoint, std::string_view id, const message& m,
                                  std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_queue(endpoint, message_id, type, headers, body, due_ms)"
         " VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(endpoint, message_id) DO NOTHING")
      .bind_all(endpoint, id, m.type, m.headers.dump(), m.body.dump(), now_ms)
      .run();
  return db_.changes() == 1;
}

std::vector<queued_message> sqlite_queue_engine::due(std::string_view endpoint, std::int64_t now_ms,
                                                     int limit) {
  auto& q = db_.prepare(
      "SELECT seq, attempts, message_id, type, headers, body FROM exactly_queue"
      " WHERE endpoint = ? AND due_ms <= ? ORDER BY due_ms, seq LIMIT ?");
  q.bind_all(endpoint, now_ms, limit);
  std::vector<queued_message> out;
  while (q.step()) {
    out.push_back(
        {q.int64(0), std::string(endpoint), read_message(q, 2), static_cast<int>(q.int64(1))});
  }
  q.reset();
  return out;
}

std::optional<std::int64_t> sqlite_queue_engine::next_due_ms(std::string_view endpoint) {
  return db_.query_int64(
      "SELECT due_ms FROM exactly_queue WHERE endpoint = ? ORDER BY due_ms LIMIT 1", endpoint);
}

std::set<std::int64_t> sqlite_queue_engine::claim_all(const std::vector<std::int64_t>& seqs,
                                                      std::int64_t now_ms) {
  // The write lock the caller's transaction takes keeps other workers out; a row still here is
  // this transaction's.
  std::set<std::int64_t> out;
  for (const std::int64_t seq : seqs) {
    if (db_.query_int64("SELECT 1 FROM exactly_queue WHERE seq = ? AND due_ms <= ?", seq, now_ms))
      out.insert(seq);
  }
  return out;
}

void sqlite_queue_engine::consume(std::int64_t seq) {
  db_.prepare("DELETE FROM exactly_queue WHERE seq = ?").bind(1, seq).run();
}

void sqlite_queue_engine::retry_later(std::int64_t seq, std::int64_t retry_at_ms,
                                      std::string_view error) {
  db_.prepare(
         "UPDATE exactly_queue SET attempts = attempts + 1, due_ms = ?, last_error = ?"
         " WHERE seq = ?")
      .bind_all(retry_at_ms, error, seq)
      .run();
}

void sqlite_queue_engine::move_to_errors(std::int64_t seq, std::string_view error,
                                         std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_error_queue(endpoint, message_id, type, headers, body, attempts,"
         " error, failed_ms) SELECT endpoint, message_id, type, headers, body, attempts + 1, ?, ?"
         " FROM exactly_queue WHERE seq = ?")
      .bind_all(error, now_ms, seq)
      .run();
  consume(seq);
}

void sqlite_queue_engine::set_headers(std::int64_t seq, const nlohmann::json& headers) {
  db_.prepare("UPDATE exactly_queue SET headers = ? WHERE seq = ?")
      .bind_all(headers.dump(), seq)
      .run();
}

void sqlite_queue_engine::add_error(std::string_view endpoint, const message& m, int attempts,
                                    std::string_view error, std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_error_queue(endpoint, message_id, type, headers, body, attempts,"
         " error, failed_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?)")
      .bind_all(endpoint, m.id, m.type, m.headers.dump(), m.body.dump(), attempts, error, now_ms)
      .run();
}

std::vector<error_entry> sqlite_queue_engine::errors(std::string_view endpoint) {
  auto& q = db_.prepare(
      "SELECT seq, attempts, error, failed_ms, message_id, type, headers, body"
      " FROM exactly_error_queue WHERE endpoint = ? ORDER BY seq");
  q.bind(1, endpoint);
  std::vector<error_entry> out;
  while (q.step()) {
    out.push_back({q.int64(0), std::string(endpoint), read_message(q, 4),
                   static_cast<int>(q.int64(1)), q.text(2), q.int64(3)});
  }
  q.reset();
  return out;
}

bool sqlite_queue_engine::requeue_error(std::int64_t error_seq, std::int64_t now_ms) {
  db_.prepare(
         "INSERT INTO exactly_queue(endpoint, message_id, type, headers, body, due_ms)"
         " SELECT endpoint, message_id, type, headers, body, ? FROM exactly_error_queue"
         " WHERE seq = ? ON CONFLICT(endpoint, message_id) DO NOTHING")
      .bind_all(now_ms, error_seq)
      .run();
  db_.prepare("DELETE FROM exactly_error_queue WHERE seq = ?").bind(1, error_seq).run();
  return db_.changes() == 1;
}

std::int64_t sqlite_queue_engine::queued(std::string_view endpoint) {
  return *db_.query_int64("SELECT count(*) FROM exactly_queue WHERE endpoint = ?", endpoint);
}

}  // namespace

std::unique_ptr<queue_engine> make_sqlite_queue_engine(sqlite::connection& db) {
  return std::make_unique<sqlite_queue_engine>(db);
}

}  // namespace exactly::client
