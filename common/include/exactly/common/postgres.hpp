#pragma once
// A thin RAII wrapper over libpq: a connection with cached prepared statements, results,
// transactions and savepoints, commit hooks, and reconnection with backoff after PostgreSQL
// went away. Errors surface as exactly::pg::error (an exactly::storage_error).
// Thread-safety: a connection belongs to one thread at a time; connected() may be read anywhere.

#include <exactly/common/durability.hpp>
#include <exactly/common/postgres_error.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct pg_conn;
struct pg_result;

namespace exactly::detail {
class commit_hooks;
class commit_tallies;
}  // namespace exactly::detail

namespace exactly::pg {

// The sums of a transaction's tallies (connection::tally), by slot.
using tally_totals = std::array<std::int64_t, 8>;

struct options {
  // A libpq connection string ("host=... dbname=...") or URI ("postgresql://...").
  std::string conninfo;
  // synchronous_commit=on: COMMIT returns once the commit is flushed (with the server's
  // fsync=on, on disk). Off only when the user opts out.
  bool synchronous_commit = true;
  // A lost connection is tried again after base, doubling up to cap (with jitter).
  std::chrono::milliseconds reconnect_base{100};
  std::chrono::milliseconds reconnect_cap{5000};
  // SQL run on each (re)connection after the settings above, e.g. to set up the session's
  // state; "" runs nothing. A failure fails the constructor, or the call that reconnected, and
  // the next call connects again.
  std::string session_setup{};
};

// A parameter sent as raw bytes (bytea), not as text.
struct bytes {
  std::string_view data;
};

// One parameter of a query, as libpq sends it.
struct param {
  std::string text;  // the value (text format), or the bytes (binary format)
  bool null = false;
  bool binary = false;
};
param to_param(std::int64_t v);
inline param to_param(int v) {
  return to_param(static_cast<std::int64_t>(v));
}
inline param to_param(unsigned v) {
  return to_param(static_cast<std::int64_t>(v));
}
param to_param(std::string_view text);
inline param to_param(const std::string& text) {
  return to_param(std::string_view(text));
}
inline param to_param(const char* text) {
  return to_param(std::string_view(text));
}
param to_param(std::nullptr_t);
param to_param(bytes b);

// A statement with its parameters bound to $1..$n; `prepared`: prepared once per connection (a
// statement whose text changes, a SAVEPOINT's, is sent unnamed).
struct statement {
  std::string sql;
  std::vector<param> params;
  bool prepared = true;
};
template <class... A>
statement bound(std::string_view sql, const A&... args) {
  return {std::string(sql), {to_param(args)...}};
}

// The rows of a query. Rows and columns are 0-based.
class result {
 public:
  explicit result(pg_result* r) : r_(r) {}
  ~result();
  result(result&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  result& operator=(result&&) = delete;
  result(const result&) = delete;

  int rows() const;
  bool is_null(int row, int col) const;
  std::int64_t int64(int row, int col) const;
  // The value as text; a bytea column is decoded to its bytes.
  std::string text(int row, int col) const;
  // Rows an INSERT, UPDATE or DELETE changed.
  std::int64_t affected() const;
  // The command tag ("COMMIT", or "ROLLBACK" for a COMMIT of a failed transaction).
  std::string_view command() const;

 private:
  pg_result* r_;
};

class connection {
 public:
  // Connects and applies `opts`. Throws error with PostgreSQL's reason on failure (a bad
  // connection string, an unknown host, a refused password).
  explicit connection(options opts);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Runs one or more statements without parameters or rows (the simple query protocol).
  void exec(std::string_view sql);
  // Runs `sql` with `args` bound to $1..$n, as a statement prepared once per connection.
  template <class... A>
  result query(std::string_view sql, const A&... args) {
    return run(sql, {to_param(args)...});
  }
  // The first column of the first row as an integer; nullopt when there is no row or it is NULL.
  template <class... A>
  std::optional<std::int64_t> query_int64(std::string_view sql, const A&... args) {
    const result r = query(sql, args...);
    if (r.rows() == 0 || r.is_null(0, 0))
      return std::nullopt;
    return r.int64(0, 0);
  }
  // Rows changed by the statement.
  template <class... A>
  std::int64_t execute(std::string_view sql, const A&... args) {
    return query(sql, args...).affected();
  }
  // The answers to `statements`, run in this order in one round trip (with any deferred ones
  // ahead of them). Throws error for the first that failed; none after it ran.
  std::vector<result> query_together(std::vector<statement> statements);
  // Sends `sql` with `args` in the round trip of the next statement that waits for its answer
  // (or of the COMMIT or RELEASE), ahead of it, and reports its failure there. Inside a
  // transaction, for a statement whose rows and count no one reads (a lock taken before a
  // lookup, an INSERT whose failure is the only news). Throws std::logic_error outside one.
  template <class... A>
  void defer(std::string_view sql, const A&... args) {
    if (depth_ == 0)
      throw std::logic_error("pg::connection::defer outside a transaction");
    deferred_.push_back(bound(sql, args...));
  }
  // A statement whose rows and count no one reads: deferred inside a transaction, run at once
  // outside one.
  template <class... A>
  void write(std::string_view sql, const A&... args) {
    if (depth_ == 0)
      query(sql, args...);
    else
      defer(sql, args...);
  }

  // True while a transaction is open (also one that failed, and one whose BEGIN is not sent yet).
  bool in_transaction() const;
  // How many `transaction` objects are open on this connection (>1 = savepoints).
  int transaction_depth() const { return depth_; }
  // As sqlite::connection::after_commit: runs `fn` once the outermost transaction open now has
  // committed; dropped if it or the savepoint open now rolls back; at once with none open.
  void after_commit(std::function<void()> fn);
  // Adds `delta` to tally `slot` (below 8) of the transaction open now: dropped if it, or the
  // savepoint open now, rolls back. When the outermost transaction commits with a total not 0,
  // the totals go to the function given to on_commit_tallies(), which defer()s what records
  // them, sent in the COMMIT's round trip. Throws std::logic_error with no transaction open.
  void tally(std::size_t slot, std::int64_t delta);
  void on_commit_tallies(std::function<void(connection&, const tally_totals&)> fn);
  // Whether the connection was up after its last use. Any thread.
  bool connected() const { return up_.load(); }
  // Outside a transaction: reconnects if the connection was lost and its backoff has passed;
  // throws error (storage failure) while PostgreSQL stays unreachable.
  void ensure_connected();
  // Whether the connection is down now: connected() false, or libpq's own status bad. Its thread.
  bool lost() const;
  // libpq's connection, for what this class does not wrap; it must not run statements while any
  // are deferred (they would run after it). Storage trouble remembered for a later 25P02 (see
  // error) is forgotten: what runs through it is unseen here.
  pg_conn* native() const;

 private:
  result run(std::string_view sql, std::vector<param> params);
  // The name of `sql` prepared on this connection, preparing it the first time.
  const std::string& prepared(std::string_view sql, std::size_t params);
  // The name the next statement prepared on this connection gets.
  std::string next_statement_name() const {
    return "exactly_" + std::to_string(prepared_.size() + 1);
  }
  // Sends the deferred statements in a round trip of their own; throws as pipeline().
  void flush_deferred();
  // The deferred statements, then `wanted`, in one round trip (libpq's pipeline mode), each
  // prepared statement parsed in its place the first time; the answers to `wanted`. Throws for
  // the first statement that failed.
  std::vector<result> pipeline(std::vector<statement> wanted);
  // A savepoint whose RELEASE waits in deferred_ (transaction::commit_later): its statements are
  // the first `statements` of deferred_, the RELEASE last.
  struct later_release {
    std::string savepoint;
    std::size_t statements = 0;
    int level = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> tallies;  // what it added: slot, delta
    std::shared_ptr<bool> hooks_dropped;  // set when it fails: its after_commit() hooks don't run
    std::function<void(std::exception_ptr)> on_failed;
  };
  // pipeline() when a statement of `later` (those led `all`) failed with `why`: rolls back to
  // it, undoes its tallies, tells its owner, and sends the statements after its RELEASE again;
  // the answers to those from `first_wanted` on.
  std::vector<result> again_without(later_release later, pg_result* why, std::string_view sql,
                                    std::vector<statement> all, std::size_t first_wanted);
  // Throws error (connection lost) after a round trip broke off in the open transaction.
  void fail_if_broken() const;
  // Throws error for a failed result (or a lost connection), keeping connected() current.
  void check(pg_result* r, std::string_view sql, bool deferred = false);
  void configure();

  options opts_;
  pg_conn* conn_ = nullptr;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> statement name
  // Statements not sent yet (BEGIN, SAVEPOINT, defer()): they go out in the round trip of the
  // next statement that waits for its answer, which reports their failure.
  std::vector<statement> deferred_;
  std::uint64_t savepoints_ = 0;        // savepoints opened: each is named by its number
  std::optional<later_release> later_;  // a savepoint released with the next round trip
  // A round trip broke off in the open transaction: nothing more runs on the connection until
  // ensure_connected() resets it, once the transaction has unwound.
  bool broken_ = false;
  // The SQLSTATE and message of the storage trouble (a deadlock, a lock timeout, ...) that
  // failed a statement of the open transaction, until a statement succeeds or the transaction
  // ends: a later statement refused because the transaction is aborted (25P02), after the caller
  // caught that error, is reported as it.
  mutable std::optional<std::pair<std::string, std::string>> aborted_by_;
  int depth_ = 0;
  std::unique_ptr<detail::commit_hooks> hooks_;
  std::unique_ptr<detail::commit_tallies> tallies_;
  std::function<void(connection&, const tally_totals&)> record_tallies_;
  std::atomic<bool> up_{false};
  int reconnect_failures_ = 0;
  std::chrono::steady_clock::time_point next_reconnect_{};
  std::mt19937_64 rng_{std::random_device{}()};
  friend class transaction;
};

// A transaction that rolls back on destruction unless commit() succeeded; opened while another
// is open on the connection, it is a SAVEPOINT inside it (see sqlite::transaction).
class transaction {
 public:
  // durability::unflushed (outermost only) commits with SET LOCAL synchronous_commit = off.
  explicit transaction(connection& db, durability d = durability::flushed);
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // COMMIT (RELEASE for a savepoint). Throws error, the transaction rolled back, if it fails,
  // including a COMMIT PostgreSQL turned into a rollback because a statement had failed.
  void commit();
  // A savepoint's RELEASE sent with the next round trip. If a statement of it fails there, the
  // connection rolls back to it (tallies, after_commit() hooks too), gives the error to
  // `on_failed` (which must not use the connection; if it throws, its exception reaches that
  // round trip's caller) and sends the rest again. The outermost transaction, or a savepoint
  // whose SAVEPOINT is not sent yet, commit() instead (and throw as it does).
  void commit_later(std::function<void(std::exception_ptr)> on_failed);
  // How the outermost COMMIT is flushed, decided any time before it (it is applied there).
  void set_durability(durability d) { durability_ = d; }
  bool is_savepoint() const { return level_ > 1; }

 private:
  void rollback() noexcept;

  connection* db_;
  int level_;
  std::string savepoint_;  // its name, below the outermost level
  bool done_ = false;
  durability durability_;
};

}  // namespace exactly::pg
