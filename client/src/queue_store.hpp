#pragma once
// Durable input queues and error queues of endpoints, in SQLite. Several endpoints may share one
// database file; a queue lives beside the user's own tables so consuming a message and changing
// state commit together. Not thread-safe: one thread uses a connection at a time. Calls that
// write expect the caller's transaction.

#include <exactly/client/message.hpp>
#include <exactly/common/sqlite.hpp>

#include <cstdint>
#include <optional>
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

class queue_store {
 public:
  // Migrates the client schema in `db`. Throws sqlite::error.
  explicit queue_store(sqlite::connection& db);

  // Appends `m` to `endpoint`'s queue, under a fresh UUIDv7 when m.id is empty; a message id
  // already queued there is ignored (returns false), so a re-sent message is not processed twice.
  bool enqueue(std::string_view endpoint, const message& m, std::int64_t now_ms);
  // Up to `limit` messages of `endpoint` due at `now_ms`, oldest first.
  std::vector<queued_message> due(std::string_view endpoint, std::int64_t now_ms, int limit);
  // When the next message of `endpoint` is due; nullopt if the queue is empty.
  std::optional<std::int64_t> next_due_ms(std::string_view endpoint);
  // Whether the message is still queued (another process sharing the queue may have taken it).
  bool contains(std::int64_t seq);
  // Removes a processed message.
  void consume(std::int64_t seq);
  // Records a failed attempt; the message is due again at `retry_at_ms`.
  void retry_later(std::int64_t seq, std::int64_t retry_at_ms, std::string_view error);
  // Moves the message to the error queue with `error` and its attempt count.
  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms);
  // The same, the message carrying `headers` instead of its own into the error queue.
  void move_to_errors(std::int64_t seq, std::string_view error, std::int64_t now_ms,
                      const nlohmann::json& headers);
  // Puts `m` straight into `endpoint`'s error queue (a protocol fault found outside a handler).
  void add_error(std::string_view endpoint, const message& m, int attempts, std::string_view error,
                 std::int64_t now_ms);
  std::vector<error_entry> errors(std::string_view endpoint);
  // Returns an error-queue entry to its endpoint's queue with its attempts reset; false if absent.
  bool requeue_error(std::int64_t error_seq, std::int64_t now_ms);
  std::int64_t queued(std::string_view endpoint);

 private:
  sqlite::connection& db_;
};

}  // namespace exactly::client
