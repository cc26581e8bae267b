#pragma once
// Durable input queues and error queues of endpoints, in the endpoint's database (SQLite or
// PostgreSQL). Several endpoints may share one database; a queue lives beside the user's own
// tables so consuming a message and changing state commit together. Not thread-safe: one thread
// uses a connection at a time. Calls that write expect the caller's transaction.

#include <exactly/client/message.hpp>
#include <exactly/common/database.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::client {

struct queued_message {
  std::int64_t seq = 0;
  std::string endpoint;
  message msg;
  int attempts = 0;  // failed handler attempts so far
};

// The queue tables of one engine (sqlite_queue_store.cpp, pg_queue_store.cpp); the contracts
// are queue_store's, whose calls these carry out.
class queue_engine {
 public:
  virtual ~queue_engine() = default;
  virtual bool enqueue(std::string_view endpoint, std::string_view id, const message& m,
                       std::int64_t now_ms) = 0;
  virtual std::vector<queued_message> due(std::string_view endpoint, std::int64_t now_ms,
                                          int limit) = 0;
  virtual std::vector<queued_message> claim_due(std::string_view endpoint, std::int64_t now_ms,
                                                int limit) = 0;
  virtual std::optional<std::int64_t> next_due_ms(std::string_view endpoint) = 0;
  virtual std::set<std::int64_t> claim_all(const std::vector<std::int64_t>& seqs,
                                           std::int64_t now_ms) = 0;
  virtual void consume(std::int64_t seq) = 0;
  virtual void retry_later(std::int64_t seq, std::int64_t retry_at_ms, std::string_view error) = 0;
  virtual void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms) = 0;
  virtual void set_headers(std::int64_t seq, const nlohmann::json& headers) = 0;
  virtual void add_error(std::string_view endpoint, const message& m, int attempts,
                         std::string_view error, std::int64_t now_ms) = 0;
  virtual std::vector<error_entry> errors(std::string_view endpoint) = 0;
  virtual bool requeue_error(std::int64_t error_seq, std::int64_t now_ms) = 0;
  virtual std::int64_t queued(std::string_view endpoint) = 0;
};

// The version of the queue tables' schema (component "exactly.client" in exactly_schema_version)
// this build's migrations end at, on both engines.
inline constexpr int queue_schema_version = 1;

// The SQLite queue tables in `db`, migrated. Throws sqlite::error.
std::unique_ptr<queue_engine> make_sqlite_queue_engine(sqlite::connection& db);
// The PostgreSQL queue tables in `db`, migrated. Throws pg::error.
std::unique_ptr<queue_engine> make_pg_queue_engine(pg::connection& db);

class queue_store {
 public:
  // Migrates the client schema in `db` (either engine). Throws the engine's storage_error.
  explicit queue_store(database db);

  // Appends `m` to `endpoint`'s queue, under a fresh UUIDv7 when m.id is empty; a message id
  // already queued there is ignored (returns false), so a re-sent message is not processed twice.
  bool enqueue(std::string_view endpoint, const message& m, std::int64_t now_ms);
  // Appends `m` (m.id set) as a message whose first attempt failed with `error`: due again at
  // `retry_at_ms` with one attempt counted.
  void enqueue_failed(std::string_view endpoint, const message& m, std::string_view error,
                      std::int64_t retry_at_ms, std::int64_t now_ms);
  // Up to `limit` messages of `endpoint` due at `now_ms`, oldest first.
  std::vector<queued_message> due(std::string_view endpoint, std::int64_t now_ms, int limit) {
    return impl_->due(endpoint, now_ms, limit);
  }
  // In the caller's transaction: up to `limit` messages of `endpoint` due at `now_ms`, oldest
  // first, each now this transaction's to handle. On PostgreSQL a row another open transaction
  // holds is passed over for the next due one (FOR UPDATE SKIP LOCKED), so workers sharing the
  // queue take different messages instead of racing for the same; on SQLite the caller's write
  // lock keeps every other worker out.
  std::vector<queued_message> claim_due(std::string_view endpoint, std::int64_t now_ms, int limit) {
    return impl_->claim_due(endpoint, now_ms, limit);
  }
  // When the next message of `endpoint` is due; nullopt if the queue is empty.
  std::optional<std::int64_t> next_due_ms(std::string_view endpoint) {
    return impl_->next_due_ms(endpoint);
  }
  // In the caller's transaction, in one query: those of `seqs` still queued and due at `now_ms`
  // (not retried later by another worker meanwhile), now this transaction's to handle. On
  // PostgreSQL the rows are locked until the transaction ends, and a row another open
  // transaction holds is left out (FOR UPDATE SKIP LOCKED), so two workers never both handle a
  // message.
  std::set<std::int64_t> claim_all(const std::vector<std::int64_t>& seqs, std::int64_t now_ms) {
    return seqs.empty() ? std::set<std::int64_t>{} : impl_->claim_all(seqs, now_ms);
  }
  // Removes a processed message.
  void consume(std::int64_t seq) { impl_->consume(seq); }
  // Records a failed attempt; the message is due again at `retry_at_ms`.
  void retry_later(std::int64_t seq, std::int64_t retry_at_ms, std::string_view error) {
    impl_->retry_later(seq, retry_at_ms, error);
  }
  // Moves the message to the error queue with `error` and its attempt count.
  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms) {
    impl_->move_to_errors(seq, error, now_ms);
  }
  // The same, the message carrying `headers` instead of its own into the error queue.
  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms,
                      const nlohmann::json& headers) {
    impl_->set_headers(seq, headers);
    impl_->move_to_errors(seq, error, now_ms);
  }
  // Puts `m` straight into `endpoint`'s error queue (a protocol fault found outside a handler).
  void add_error(std::string_view endpoint, const message& m, int attempts, std::string_view error,
                 std::int64_t now_ms) {
    impl_->add_error(endpoint, m, attempts, error, now_ms);
  }
  // `endpoint`'s error queue, oldest first.
  std::vector<error_entry> errors(std::string_view endpoint) { return impl_->errors(endpoint); }
  // Returns an error-queue entry to its endpoint's queue with its attempts reset; false if absent.
  bool requeue_error(std::int64_t error_seq, std::int64_t now_ms) {
    return impl_->requeue_error(error_seq, now_ms);
  }
  // Messages in `endpoint`'s queue.
  std::int64_t queued(std::string_view endpoint) { return impl_->queued(endpoint); }
  // How many messages enqueue() appended through this store, in transactions committed or not:
  // a change says that some may be due now.
  std::uint64_t appended() const { return appended_; }

 private:
  database db_;
  std::unique_ptr<queue_engine> impl_;
  std::uint64_t appended_ = 0;
};

}  // namespace exactly::client
