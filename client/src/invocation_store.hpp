#pragma once
// The client's durable record of each committed invoke_http: the POST to publish, then (after the
// follow-up committed) the DELETE to send. Rows live in the endpoint's database (SQLite or
// PostgreSQL) and change only inside the caller's transaction.

#include "invocation_lifecycle.hpp"

#include <exactly/client/invocation_info.hpp>
#include <exactly/client/message.hpp>
#include <exactly/common/database.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::client {

struct invocation_row {
  std::string request_id;
  std::string endpoint;  // receives the follow-up
  std::string url;
  message follow_up;
  int attempts = 0;
  std::optional<std::int64_t> staged_until_ms{};  // the PUT answer's retention, when known
  // The body PUT, kept so that a POST answered 404 can stage it again under the same id; nullopt
  // when not kept (cleanup rows, and rows committed before schema version 3).
  std::optional<std::string> body{};
  std::string content_type{};  // the Content-Type PUT with `body`
};

// The stored value of a stored state (post_pending 1, awaiting_follow_up 2, delete_pending 3,
// restage_pending 4);
// throws std::logic_error for the states that never reach the table.
int stored_value(invocation_state s);
// The state of a stored value; throws std::logic_error for a value no state has.
invocation_state stored_state(int value);

// A row as an engine stores it: the state as its stored number, the follow-up as JSON text.
struct stored_invocation {
  std::string request_id;
  std::string endpoint;
  std::string url;
  std::string follow_up;
  int attempts = 0;
  // The body and Content-Type PUT (nullopt: not kept); written by insert(), read by due().
  std::optional<std::string> body{};
  std::string content_type{};
  // Read by find() only (`state` by claim_due() too):
  std::optional<std::int64_t> staged_until_ms{};
  int state = 0;
  std::string last_error{};
  std::optional<std::int64_t> response_until_ms{};
};

// The invocations table of one engine (sqlite_invocation_store.cpp, pg_invocation_store.cpp);
// the contracts are invocation_store's, whose calls these carry out.
class invocation_engine {
 public:
  virtual ~invocation_engine() = default;
  virtual void insert(const stored_invocation& row, int state, std::int64_t now_ms) = 0;
  virtual bool contains(std::string_view request_id) = 0;
  virtual std::vector<std::string> missing(const std::vector<std::string>& request_ids) = 0;
  virtual std::vector<stored_invocation> due(int state, std::int64_t now_ms, int limit) = 0;
  // Rows of each of `states` in turn, each row's `state` set.
  virtual std::vector<stored_invocation> claim_due(std::string_view endpoint,
                                                   const std::vector<int>& states,
                                                   std::int64_t now_ms, int limit) = 0;
  virtual bool move_if_in(std::string_view request_id, int from, int to, std::int64_t due_ms) = 0;
  virtual void move_if_in_deferred(std::string_view request_id, int from, int to,
                                   std::int64_t due_ms) = 0;
  virtual void retry_later(std::string_view request_id, std::int64_t due_ms,
                           std::string_view error) = 0;
  virtual void remove(std::string_view request_id) = 0;
  virtual std::int64_t pending() = 0;
  virtual std::optional<stored_invocation> find(std::string_view request_id) = 0;
  virtual void record_staged_until(std::string_view request_id, std::int64_t until_ms) = 0;
  virtual void record_response_until(std::string_view request_id, std::int64_t until_ms) = 0;
};

// The SQLite invocations table in `db`, migrated. Throws sqlite::error.
std::unique_ptr<invocation_engine> make_sqlite_invocation_engine(sqlite::connection& db);
// The PostgreSQL invocations table in `db`, migrated. Throws pg::error.
std::unique_ptr<invocation_engine> make_pg_invocation_engine(pg::connection& db);

class invocation_store {
 public:
  // Migrates the invocations table in `db` (either engine).
  explicit invocation_store(database db);

  // Records a committed invocation, with the body it PUT when row.body holds it: post_pending.
  void add(const invocation_row& row, std::int64_t now_ms);
  // Queues the DELETE of an id PUT by an attempt that never committed (no follow-up); an id
  // already recorded is left as it is.
  void add_cleanup(std::string_view request_id, std::string_view endpoint, std::string_view url,
                   std::int64_t now_ms);
  // Whether a row of `request_id` is committed (or written by the caller's transaction).
  bool contains(std::string_view request_id) { return impl_->contains(request_id); }
  // Those of `request_ids` that no row has (committed, or written by the caller's transaction),
  // in one query.
  std::vector<std::string> missing(const std::vector<std::string>& request_ids) {
    return request_ids.empty() ? request_ids : impl_->missing(request_ids);
  }
  // Up to `limit` rows in state `s` due at `now_ms`, oldest first, with their kept body. Rows of
  // the stored states only: post_pending, restage_pending, awaiting_follow_up, delete_pending.
  std::vector<invocation_row> due(invocation_state s, std::int64_t now_ms, int limit);
  // Up to `limit` rows of each of `states`, of `endpoint` only, in the caller's transaction (on
  // PostgreSQL in one round trip), each with the state it was read in and now this transaction's
  // to publish. On PostgreSQL a row another open transaction holds is passed over for the next
  // due one (FOR UPDATE SKIP LOCKED), so publishers sharing the table send different steps
  // instead of the same ones twice, and a claimed row stays in its state until the transaction
  // ends; on SQLite the caller's write lock keeps other publishers out.
  std::vector<std::pair<invocation_state, invocation_row>> claim_due(
      std::string_view endpoint, const std::vector<invocation_state>& states, std::int64_t now_ms,
      int limit);
  // Moves the row from `from` to `to` (attempts reset) only if it is in `from` now; false if it was
  // not, so two publishers sharing the database never both complete the same step. On PostgreSQL
  // under READ COMMITTED a concurrent move of the row is waited for and then re-checked.
  bool move_if_in(std::string_view request_id, invocation_state from, invocation_state to,
                  std::int64_t due_ms);
  // The same, in the caller's transaction, for a caller that does not ask whether the row moved:
  // on PostgreSQL sent with the transaction's next round trip, and a failure reported there.
  void move_if_in_deferred(std::string_view request_id, invocation_state from, invocation_state to,
                           std::int64_t due_ms);
  // Counts a failed send; the step is due again at `due_ms`.
  void retry_later(std::string_view request_id, std::int64_t due_ms, std::string_view error) {
    impl_->retry_later(request_id, due_ms, error);
  }
  // Drops a finished row.
  void remove(std::string_view request_id) { impl_->remove(request_id); }
  // Rows not yet finished (any state).
  std::int64_t pending() { return impl_->pending(); }
  // The row of `request_id` as the client's API shows it; nullopt when there is none.
  std::optional<invocation_info> find(std::string_view request_id);
  // Records until when the server keeps the staged request (its PUT answer's retention).
  void record_staged_until(std::string_view request_id, std::int64_t until_ms) {
    impl_->record_staged_until(request_id, until_ms);
  }
  // Records until when the server keeps the stored response (its POST answer's retention).
  void record_response_until(std::string_view request_id, std::int64_t until_ms) {
    impl_->record_response_until(request_id, until_ms);
  }

 private:
  void insert(const invocation_row& row, invocation_state s, std::int64_t now_ms);
  std::unique_ptr<invocation_engine> impl_;
};

}  // namespace exactly::client
