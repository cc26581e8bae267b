#pragma once
// The connection of the storage engine a piece of work runs on, SQLite or PostgreSQL: what
// business logic and handlers write their own state through, inside the protocol's own
// transaction. A typed handle: as_sqlite() on a PostgreSQL engine (or the reverse) throws.
// For SQL both engines accept, execute() and query_int64() run it on either.

#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace exactly {

// `sql` with its ? placeholders numbered $1, $2, ... for PostgreSQL. A ? inside a quoted literal
// or identifier is left alone.
std::string numbered_placeholders(std::string_view sql);

enum class engine { sqlite, postgres };

class database {
 public:
  database(sqlite::connection& c) : sqlite_(&c) {}  // NOLINT: a connection is a database
  database(pg::connection& c) : pg_(&c) {}          // NOLINT

  engine kind() const { return sqlite_ ? engine::sqlite : engine::postgres; }
  // The SQLite connection; throws std::logic_error when the engine is PostgreSQL.
  sqlite::connection& as_sqlite() const;
  // The PostgreSQL connection; throws std::logic_error when the engine is SQLite.
  pg::connection& as_postgres() const;

  // Runs statements without parameters or rows.
  void exec(std::string_view sql) const;
  // Runs `sql`, written with ? placeholders, with `args` bound to them in order; returns the
  // rows it changed. The SQL must mean the same on both engines (INSERT ... ON CONFLICT does).
  template <class... A>
  std::int64_t execute(std::string_view sql, const A&... args) const {
    if (sqlite_) {
      sqlite_->prepare(sql).bind_all(args...).run();
      return sqlite_->changes();
    }
    return pg_->execute(numbered_placeholders(sql), args...);
  }
  // The first column of the first row `sql` selects, as an integer; nullopt when none or NULL.
  template <class... A>
  std::optional<std::int64_t> query_int64(std::string_view sql, const A&... args) const {
    if (sqlite_) {
      auto& q = sqlite_->prepare(sql);
      q.bind_all(args...);
      std::optional<std::int64_t> v;
      if (q.step() && !q.is_null(0))
        v = q.int64(0);
      q.reset();
      return v;
    }
    return pg_->query_int64(numbered_placeholders(sql), args...);
  }

  // Whether a transaction is open on the connection.
  bool in_transaction() const;
  // See sqlite::connection::after_commit (the same on both engines).
  void after_commit(std::function<void()> fn) const;

 private:
  sqlite::connection* sqlite_ = nullptr;
  pg::connection* pg_ = nullptr;
};

// A transaction on either engine (a savepoint inside an open one); rolls back on destruction
// unless commit() succeeded. On SQLite it takes the write lock at once (BEGIN IMMEDIATE).
class database_transaction {
 public:
  // durability::unflushed only for a commit whose loss in a crash the caller tolerates (see
  // durability); for a savepoint it changes nothing.
  explicit database_transaction(const database& db, durability d = durability::flushed);
  ~database_transaction();
  database_transaction(const database_transaction&) = delete;
  database_transaction& operator=(const database_transaction&) = delete;
  // Throws the engine's error (an exactly::storage_error) when it fails.
  void commit();
  // A savepoint on PostgreSQL: its RELEASE goes with the next round trip
  // (pg::transaction::commit_later), and `on_failed` gets the error if a statement of it fails
  // there. Anything else: commit().
  void commit_later(std::function<void(std::exception_ptr)> on_failed);
  // PostgreSQL: how the COMMIT is flushed, decided after the transaction began. SQLite decides
  // at BEGIN: std::logic_error.
  void set_durability(durability d);

 private:
  std::unique_ptr<sqlite::transaction> sqlite_;
  std::unique_ptr<pg::transaction> pg_;
};

}  // namespace exactly
