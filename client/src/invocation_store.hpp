#pragma once
// The client's durable record of each committed invoke_http: the POST to publish, then (after the
// follow-up committed) the DELETE to send. Rows live in the endpoint's database and change only
// inside the caller's transaction.

#include "invocation_lifecycle.hpp"

#include <exactly/client/message.hpp>
#include <exactly/common/sqlite.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::client {

struct invocation_row {
  std::string request_id;
  std::string endpoint;  // receives the follow-up
  std::string url;
  message follow_up;
  int attempts = 0;
};

class invocation_store {
 public:
  explicit invocation_store(sqlite::connection& db);

  // Records a committed invocation: post_pending.
  void add(const invocation_row& row, std::int64_t now_ms);
  // Queues the DELETE of an id PUT by an attempt that never committed (no follow-up); an id
  // already recorded is left as it is.
  void add_cleanup(std::string_view request_id, std::string_view endpoint, std::string_view url,
                   std::int64_t now_ms);
  bool contains(std::string_view request_id);
  std::vector<invocation_row> due(invocation_state s, std::int64_t now_ms, int limit);
  // Rows of the stored states only: post_pending, awaiting_follow_up, delete_pending.
  // Moves the row from `from` to `to` (attempts reset) only if it is in `from` now; false if it was
  // not, so two publishers sharing the database never both complete the same step.
  bool move_if_in(std::string_view request_id, invocation_state from, invocation_state to,
                  std::int64_t due_ms);
  void retry_later(std::string_view request_id, std::int64_t due_ms, std::string_view error);
  void remove(std::string_view request_id);
  // Rows not yet finished (any state).
  std::int64_t pending();

 private:
  void insert(const invocation_row& row, invocation_state s, std::int64_t now_ms);
  sqlite::connection& db_;
};

}  // namespace exactly::client
