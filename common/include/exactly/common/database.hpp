#pragma once
// The connection of the storage engine a piece of work runs on, SQLite or PostgreSQL: what
// business logic and handlers write their own state through, inside the protocol's own
// transaction. A typed handle: as_sqlite() on a PostgreSQL engine (or the reverse) throws.

#include <functional>
#include <memory>

namespace exactly {

namespace sqlite {
class connection;
class transaction;
}  // namespace sqlite
namespace pg {
class connection;
class transaction;
}  // namespace pg

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
  explicit database_transaction(const database& db);
  ~database_transaction();
  database_transaction(const database_transaction&) = delete;
  database_transaction& operator=(const database_transaction&) = delete;
  // Throws the engine's error (an exactly::storage_error) when it fails.
  void commit();

 private:
  std::unique_ptr<sqlite::transaction> sqlite_;
  std::unique_ptr<pg::transaction> pg_;
};

}  // namespace exactly
