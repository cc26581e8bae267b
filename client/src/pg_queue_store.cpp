// Durable input queues and error queues of endpoints, in PostgreSQL.
#include "pg_text_array.hpp"
#include "queue_store.hpp"

#include <exactly/common/migrations.hpp>

#include <exactly/common/postgres.hpp>
#include <iterator>

namespace exactly::client {
namespace {

// The columns of a queued message, shared by the queue and the error queue.
#define EXACTLY_PG_MESSAGE_COLUMNS                                                \
  " seq BIGSERIAL PRIMARY KEY, endpoint TEXT NOT NULL, message_id TEXT NOT NULL," \
  " type TEXT NOT NULL, headers TEXT NOT NULL, body TEXT NOT NULL,"

constexpr migration schema[] = {
    {1, "CREATE TABLE exactly_queue (" EXACTLY_PG_MESSAGE_COLUMNS
        " attempts BIGINT NOT NULL DEFAULT 0,"
        " due_ms BIGINT NOT NULL,"
        " last_error TEXT,"
        " UNIQUE (endpoint, message_id));"
        "CREATE INDEX exactly_queue_due ON exactly_queue(endpoint, due_ms, seq);"
        "CREATE TABLE exactly_error_queue (" EXACTLY_PG_MESSAGE_COLUMNS " attempts BIGINT NOT NULL,"
        " error TEXT NOT NULL,"
        " failed_ms BIGINT NOT NULL);"},
};
static_assert(std::size(schema) == queue_schema_version &&
              schema[std::size(schema) - 1].version == queue_schema_version);

message read_message(const pg::result& r, int row, int first) {
  message m;
  m.id = r.text(row, first);
  m.type = r.text(row, first + 1);
  m.headers = nlohmann::json::parse(r.text(row, first + 2));
  m.body = nlohmann::json::parse(r.text(row, first + 3));
  return m;
}

class pg_queue_engine final : public queue_engine {
 public:
  explicit pg_queue_engine(pg::connection& db) : db_(db) {
    pg::migrate(db_, "exactly.client", schema);
  }

  bool enqueue(std::string_view endpoint, std::string_view id, const message& m,
               std::int64_t now_ms) override {
    return db_.execute(
               "INSERT INTO exactly_queue(endpoint, message_id, type, headers, body, due_ms)"
               " VALUES($1, $2, $3, $4, $5, $6) ON CONFLICT(endpoint, message_id) DO NOTHING",
               endpoint, id, m.type, m.headers.dump(), m.body.dump(), now_ms) == 1;
  }

  std::vector<queued_message> due(std::string_view endpoint, std::int64_t now_ms,
                                  int limit) override {
    return read_due(endpoint, now_ms, limit, false);
  }

  std::vector<queued_message> claim_due(std::string_view endpoint, std::int64_t now_ms,
                                        int limit) override {
    // Locked until the caller's transaction ends; rows a worker handles now are skipped.
    return read_due(endpoint, now_ms, limit, true);
  }

  std::optional<std::int64_t> next_due_ms(std::string_view endpoint) override {
    return db_.query_int64(
        "SELECT due_ms FROM exactly_queue WHERE endpoint = $1 ORDER BY due_ms LIMIT 1", endpoint);
  }

  std::set<std::int64_t> claim_all(const std::vector<std::int64_t>& seqs,
                                   std::int64_t now_ms) override {
    // Locked until the caller's transaction ends; a row locked by another transaction (a worker
    // handling it now) is skipped rather than waited for, and one it deleted is gone.
    std::vector<std::string> texts;
    for (const std::int64_t seq : seqs)
      texts.push_back(std::to_string(seq));
    const pg::result r = db_.query(
        "SELECT seq FROM exactly_queue WHERE seq = ANY($1::bigint[]) AND due_ms <= $2"
        " FOR UPDATE SKIP LOCKED",
        pg_text_array(texts), now_ms);
    std::set<std::int64_t> out;
    for (int i = 0; i < r.rows(); ++i)
      out.insert(r.int64(i, 0));
    return out;
  }

  void consume(std::int64_t seq) override {
    db_.write("DELETE FROM exactly_queue WHERE seq = $1", seq);
  }

  void retry_later(std::int64_t seq, std::int64_t retry_at_ms, std::string_view error) override {
    db_.write(
        "UPDATE exactly_queue SET attempts = attempts + 1, due_ms = $1, last_error = $2"
        " WHERE seq = $3",
        retry_at_ms, error, seq);
  }

  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms) override {
    db_.write(
        "INSERT INTO exactly_error_queue(endpoint, message_id, type, headers, body, attempts,"
        " error, failed_ms) SELECT endpoint, message_id, type, headers, body, attempts + 1,"
        " $1::text, $2::bigint FROM exactly_queue WHERE seq = $3",
        error, now_ms, seq);
    consume(seq);
  }

  void set_headers(std::int64_t seq, const nlohmann::json& headers) override {
    db_.write("UPDATE exactly_queue SET headers = $1 WHERE seq = $2", headers.dump(), seq);
  }

  void add_error(std::string_view endpoint, const message& m, int attempts, std::string_view error,
                 std::int64_t now_ms) override {
    db_.write(
        "INSERT INTO exactly_error_queue(endpoint, message_id, type, headers, body, attempts,"
        " error, failed_ms) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
        endpoint, m.id, m.type, m.headers.dump(), m.body.dump(), attempts, error, now_ms);
  }

  std::vector<error_entry> errors(std::string_view endpoint) override {
    const pg::result r = db_.query(
        "SELECT seq, attempts, error, failed_ms, message_id, type, headers, body"
        " FROM exactly_error_queue WHERE endpoint = $1 ORDER BY seq",
        endpoint);
    std::vector<error_entry> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({r.int64(i, 0), std::string(endpoint), read_message(r, i, 4),
                     static_cast<int>(r.int64(i, 1)), r.text(i, 2), r.int64(i, 3)});
    }
    return out;
  }

  bool requeue_error(std::int64_t error_seq, std::int64_t now_ms) override {
    db_.write(
        "INSERT INTO exactly_queue(endpoint, message_id, type, headers, body, due_ms)"
        " SELECT endpoint, message_id, type, headers, body, $1::bigint FROM exactly_error_queue"
        " WHERE seq = $2 ON CONFLICT(endpoint, message_id) DO NOTHING",
        now_ms, error_seq);
    return db_.execute("DELETE FROM exactly_error_queue WHERE seq = $1", error_seq) == 1;
  }

  std::int64_t queued(std::string_view endpoint) override {
    return *db_.query_int64("SELECT count(*) FROM exactly_queue WHERE endpoint = $1", endpoint);
  }

 private:
  // Up to `limit` of `endpoint`'s messages due at `now_ms`, oldest first; locked (skipping rows
  // another transaction holds) when `claim`.
  std::vector<queued_message> read_due(std::string_view endpoint, std::int64_t now_ms, int limit,
                                       bool claim) {
    static const std::string select =
        "SELECT seq, attempts, message_id, type, headers, body FROM exactly_queue"
        " WHERE endpoint = $1 AND due_ms <= $2 ORDER BY due_ms, seq LIMIT $3";
    static const std::string for_update = select + " FOR UPDATE SKIP LOCKED";
    const pg::result r = db_.query(claim ? for_update : select, endpoint, now_ms, limit);
    std::vector<queued_message> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({r.int64(i, 0), std::string(endpoint), read_message(r, i, 2),
                     static_cast<int>(r.int64(i, 1))});
    }
    return out;
  }

  pg::connection& db_;
};

}  // namespace

std::unique_ptr<queue_engine> make_pg_queue_engine(pg::connection& db) {
  return std::make_unique<pg_queue_engine>(db);
}

}  // namespace exactly::client
