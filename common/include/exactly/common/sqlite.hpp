#pragma once
// A thin RAII wrapper over SQLite: connection with a statement cache, statements, transactions.
// Errors surface as exactly::sqlite::error (an exactly::storage_error in sqlite_category()).
// Thread-safety: a connection and its statements belong to one thread at a time.

#include <exactly/common/durability.hpp>
#include <exactly/common/storage_error.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace exactly::detail {
class commit_hooks;
class checkpoint_hook;
}  // namespace exactly::detail

namespace exactly::sqlite {

// Category of SQLite's primary result codes (SQLITE_BUSY, SQLITE_IOERR, ...).
const boost::system::error_category& sqlite_category() noexcept;

// A failed SQLite call. busy() tells a lock conflict (SQLITE_BUSY/LOCKED) apart from real failures.
class error : public storage_error {
 public:
  error(int sqlite_code, const std::string& what);
  bool busy() const noexcept;
  // Busy, locked, I/O, full, read-only, corrupt, cannot open, out of memory, not a database.
  bool storage_failure() const noexcept override;
};

enum class synchronous { off, normal, full, extra };

struct options {
  bool wal = true;                       // journal_mode=WAL
  synchronous sync = synchronous::full;  // durability; FULL unless the user opts out
  // Wait for other writers this long, retrying every 0.1 ms at first, then every 1 ms (SQLite's
  // own busy timeout sleeps up to 100 ms between tries, which makes long tails under contention).
  std::chrono::milliseconds busy_timeout{10000};
  bool foreign_keys = true;
  // After a checkpoint lets the WAL start over, it is truncated to this size, so a burst does not
  // leave a large WAL file behind for good (journal_size_limit; -1 keeps every byte). About the
  // size a WAL of checkpoint_pages reaches (pages of 4 KiB, 24 bytes a frame more), so a steady
  // stream keeps one file: keep it at least that when raising checkpoint_pages.
  std::int64_t wal_size_limit_bytes = 16 << 20;
  // Once the WAL holds this many pages, a thread of this process (one per database file) copies
  // it into the database, with that copy's fsyncs, instead of the connection that committed
  // (SQLite's automatic checkpoint, which stays in use with 0 and for an in-memory database).
  // Each WAL that starts over costs one commit a checkpoint's fsyncs (below): on a disk slow to
  // sync, a larger WAL is fewer such stalls, at 4 KiB of disk a page.
  int checkpoint_pages = 4000;
  // Once that thread's last copy left at most a quarter of checkpoint_pages uncopied (once per
  // WAL), and past this many pages in any case, the connection that commits copies what the
  // thread has not yet, so the WAL starts over (only a writer can copy it to its end while
  // commits keep coming): that rest (at most a quarter of checkpoint_pages before this many), and
  // the fsyncs of a checkpoint. Must be above checkpoint_pages (std::invalid_argument). After a
  // failed checkpoint (the disk), none of the file runs while the process has it open, logged as
  // critical: the WAL keeps every frame.
  int finish_checkpoint_pages = 16000;
};

class connection;

// A prepared statement. Parameters are 1-based, columns 0-based. step() throws on failure.
class statement {
 public:
  statement(connection& db, std::string_view sql);
  ~statement();
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  statement& bind(int i, std::int64_t v);
  statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  statement& bind(int i, unsigned v) { return bind(i, static_cast<std::int64_t>(v)); }
  statement& bind(int i, std::string_view text);
  statement& bind(int i, const char* text) { return bind(i, std::string_view(text)); }
  statement& bind(int i, const std::string& text) { return bind(i, std::string_view(text)); }
  statement& bind(int i, std::nullptr_t);
  statement& bind_blob(int i, std::string_view bytes);
  // Binds each argument to parameters 1..n in order.
  template <class... A>
  statement& bind_all(const A&... a) {
    [[maybe_unused]] int i = 0;
    (bind(++i, a), ...);
    return *this;
  }

  // Advances; true when a row is available, false when done.
  bool step();
  // Runs to completion (for statements that return no rows) and resets.
  void run();
  // Resets for re-execution and clears bindings.
  void reset();

  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  std::string text(int col) const;  // also reads blobs
  int columns() const;

 private:
  connection* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class connection {
 public:
  // Opens (creating if needed) and applies `opts`. Throws error on failure.
  explicit connection(const std::string& path, options opts = {});
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Runs one or more SQL statements with no parameters and no rows.
  void exec(std::string_view sql);
  // A cached prepared statement for `sql`, reset and with bindings cleared.
  statement& prepare(std::string_view sql);
  // The first column of the first row as an integer (cached statement, `args` bound to
  // parameters 1..n); nullopt when there is no row.
  template <class... A>
  std::optional<std::int64_t> query_int64(std::string_view sql, const A&... args) {
    statement& q = prepare(sql);
    q.bind_all(args...);
    std::optional<std::int64_t> v;
    if (q.step())
      v = q.int64(0);
    q.reset();
    return v;
  }
  // Resets every cached statement (releases read locks held by unfinished statements).
  void reset_all();
  // Rows changed by the last INSERT/UPDATE/DELETE.
  std::int64_t changes() const;
  // True while SQLite has a transaction open on this connection.
  bool in_transaction() const;
  // How many `transaction` objects are open on this connection (0 = none; >1 = savepoints).
  int transaction_depth() const { return depth_; }
  // Runs `fn` once the outermost transaction open now has committed; drops it if that
  // transaction, or the savepoint open now, rolls back. With no transaction open, runs it at
  // once. `fn` must not throw (std::terminate if it does).
  void after_commit(std::function<void()> fn);
  sqlite3* native() const { return db_; }
  const std::string& path() const { return path_; }
  // Whether a transaction can be left unsynced for a later synced one (WAL, synchronous >= FULL).
  bool can_defer_sync() const { return wal_ && sync_ >= synchronous::full; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<statement>> cache_;
  int depth_ = 0;
  std::unique_ptr<detail::commit_hooks> hooks_;
  std::unique_ptr<detail::checkpoint_hook> checkpoints_;  // after db_ is closed
  std::chrono::milliseconds busy_timeout_;
  std::chrono::steady_clock::time_point busy_since_{};
  bool wal_ = true;
  synchronous sync_ = synchronous::full;
  bool sync_deferred_ = false;  // at NORMAL for the open transaction; restored at its end
  void restore_sync() noexcept;
  void enter_wal();
  static int on_busy(void* self, int tries);
  friend class transaction;
};

// A transaction that rolls back on destruction unless commit() succeeded. Opened while another
// transaction object is open on the connection, it is a SAVEPOINT inside it: commit() releases
// it into the outer transaction (durable only when that commits), a rollback undoes only its own
// writes. Group commit relies on this: one outer transaction, one savepoint per request.
class transaction {
 public:
  enum class mode { deferred, immediate };
  // BEGIN IMMEDIATE by default, so a writer takes the write lock up front; `m` is ignored for
  // a savepoint.
  // durability::unflushed (outermost only, WAL mode with synchronous FULL or EXTRA; elsewhere it
  // changes nothing) runs the transaction at synchronous=NORMAL: NORMAL, not OFF, since in WAL
  // mode a checkpoint at NORMAL still syncs the WAL before copying it and the database before the
  // WAL starts over, so no flushed commit can be lost through it.
  explicit transaction(connection& db, mode m = mode::immediate,
                       durability d = durability::flushed);
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // COMMIT (RELEASE for a savepoint); throws error, and the transaction is rolled back, if it
  // fails.
  void commit();
  bool is_savepoint() const { return level_ > 1; }
  connection& db() const { return *db_; }

 private:
  void rollback() noexcept;

  connection* db_;
  int level_;  // 1 = the outermost transaction
  bool done_ = false;
};

}  // namespace exactly::sqlite
