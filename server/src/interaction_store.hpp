#pragma once
// The connector's storage contract: interactions, the server outbox and dead letters.
// One engine per database: SQLite (sqlite_store) or PostgreSQL (pg_store), several connector
// processes then sharing one database. Every call except begin() and available() runs inside the
// transaction begin() opened, on that thread. Failures throw the engine's storage_error (storage
// trouble when storage_failure()); a broken invariant throws std::logic_error. A write whose
// answer no one reads may report its failure later, at the latest from its commit (PostgreSQL
// sends it with the next round trip).

#include <exactly/server/connector_types.hpp>
#include <exactly/server/stored_response.hpp>

#include "id_state.hpp"

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::server {

struct interaction_record : record_facts {
  std::int64_t id_ms = 0;
  std::string request_body;  // staged/executed only
  stored_response response;  // executed only
};

// What `owner`'s staged rows hold: the quotas' figures.
struct staged_load {
  std::int64_t rows = 0;
  std::int64_t bytes = 0;  // request bodies
};

// What a PUT decides on: the id's row, and what staging the id needs if it is unknown.
struct put_lookup {
  std::optional<record_facts> known;
  std::int64_t clock_floor = 0;  // read after the row was looked for
  staged_load load;              // the owner's
};

struct outbox_message {
  std::int64_t seq = 0;
  std::string type;
  std::string body;    // JSON text
  std::string source;  // route/id that sent it
  int attempts = 0;
};

// Records that `n` rows are in state `state` (its column value: 1 staged, 2 executed,
// 3 tombstone); another value is ignored.
inline void set_count(state_counts& c, std::int64_t state, std::int64_t n) {
  switch (state) {
    case 1:
      c.staged = n;
      break;
    case 2:
      c.executed = n;
      break;
    case 3:
      c.tombstone = n;
      break;
    default:
      break;
  }
}

// A storage transaction; rolls back on destruction unless committed. commit() throws on failure.
class store_transaction {
 public:
  virtual ~store_transaction() = default;
  virtual void commit() = 0;
  // Commits, or (a savepoint on PostgreSQL) has its end sent with the next round trip: a failure
  // there rolls this one back alone and goes to `on_failed`, before the group's COMMIT returns.
  virtual void commit_later(std::function<void(std::exception_ptr)> on_failed) {
    (void)on_failed;
    commit();
  }
};

class interaction_store {
 public:
  virtual ~interaction_store() = default;

  // Opens a transaction; `write` takes the write lock at once (BEGIN IMMEDIATE on SQLite).
  virtual std::unique_ptr<store_transaction> begin(bool write) = 0;
  // Whether the engine was reachable after its last call (any thread).
  virtual bool available() const = 0;
  // In a write transaction: no other transaction decides on (route, id) until this one ends,
  // and the row found next is the latest committed one (SQLite: the write lock already does it).
  virtual void lock_id(std::string_view route, std::string_view id) = 0;
  // Runs `hook` once the outermost transaction open now commits; drops it if that transaction
  // (or the savepoint open now) rolls back; with none open, runs it at once. Must not throw.
  virtual void after_commit(std::function<void()> hook) = 0;

  virtual std::optional<interaction_record> find(std::string_view route, std::string_view id) = 0;
  // The same row's facts only, without its bodies: what PUT and DELETE decide on.
  virtual std::optional<record_facts> find_facts(std::string_view route, std::string_view id) = 0;
  // `owner`'s staged rows and their request body bytes, in one query (running figures or an
  // index: no row read).
  virtual staged_load staged_of(std::string_view owner) = 0;
  // find_facts(), then clock_floor() and staged_of(`owner`) in this order if the id is unknown
  // (an engine may read all three in one round trip, the last two then whatever it found).
  virtual put_lookup find_for_put(std::string_view route, std::string_view id,
                                  std::string_view owner) {
    put_lookup l{find_facts(route, id), 0, {}};
    if (!l.known) {
      l.clock_floor = clock_floor();
      l.load = staged_of(owner);
    }
    return l;
  }
  std::int64_t count_staged(std::string_view owner) { return staged_of(owner).rows; }
  std::int64_t staged_bytes(std::string_view owner) { return staged_of(owner).bytes; }
  virtual void insert_staged(std::string_view route, std::string_view id, std::string_view owner,
                             std::int64_t id_ms, std::int64_t now_ms, std::string_view content_type,
                             std::string_view body, std::string_view sha256) = 0;
  // The staged row executed with `response`. A row not staged is refused: std::logic_error
  // here, or the engine's error at the latest from the commit it goes with.
  virtual void mark_executed(std::string_view route, std::string_view id,
                             const stored_response& response, std::int64_t now_ms) = 0;
  // Turns the row into a tombstone (dropping bodies), inserting one if the id is unknown. `was`:
  // the row's state as the caller read it under its lock (nullopt: no row), for the counters.
  virtual void put_tombstone(std::string_view route, std::string_view id, std::string_view owner,
                             std::int64_t id_ms, tombstone_reason reason, std::int64_t now_ms,
                             std::optional<id_state> was) = 0;
  virtual sweep_result sweep(std::int64_t now_ms, const timing& t) = 0;
  // Rows by state, from counters kept in the transactions that change them: O(1), no scan.
  virtual state_counts counts() = 0;
  // The highest protocol time any process sharing the store has persisted (0: none yet).
  virtual std::int64_t clock_floor() = 0;
  // In a write transaction: persists max(clock_floor(), ms).
  virtual void raise_clock_floor(std::int64_t ms) = 0;

  virtual void outbox_add(std::string_view type, std::string_view body, std::string_view source,
                          std::int64_t now_ms) = 0;
  // Up to `limit` messages due at `now_ms` with a seq up to `max_seq`, oldest first.
  virtual std::vector<outbox_message> outbox_due(std::int64_t now_ms, int limit,
                                                 std::int64_t max_seq) = 0;
  // The seq of the newest message (0 if none).
  virtual std::int64_t outbox_last_seq() = 0;
  // In a write transaction: takes message `seq` for this transaction if it is still there and
  // due at `now_ms` and no other transaction holds it; false otherwise (another process has it).
  virtual bool outbox_claim(std::int64_t seq, std::int64_t now_ms) = 0;
  virtual void outbox_remove(std::int64_t seq) = 0;
  virtual void outbox_retry_later(std::int64_t seq, std::int64_t next_attempt_ms,
                                  std::string_view error) = 0;
  virtual void outbox_dead_letter(std::int64_t seq, std::string_view error,
                                  std::int64_t now_ms) = 0;
  // Both O(1), from counters as counts().
  virtual std::int64_t outbox_pending() = 0;
  virtual std::int64_t dead_letter_count() = 0;
};

}  // namespace exactly::server
