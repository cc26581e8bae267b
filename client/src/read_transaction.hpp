#pragma once
// A read of several statements outside the write path: on SQLite a deferred transaction (one
// snapshot, no write lock), rolled back at the end; on PostgreSQL nothing (each statement reads
// what is committed when it starts).

#include <exactly/common/database.hpp>
#include <exactly/common/sqlite.hpp>

#include <optional>

namespace exactly::client {

class read_transaction {
 public:
  // Opens the read on `db`.
  explicit read_transaction(const database& db) {
    if (db.kind() == engine::sqlite)
      tx_.emplace(db.as_sqlite(), sqlite::transaction::mode::deferred);
  }

 private:
  std::optional<sqlite::transaction> tx_;
};

}  // namespace exactly::client
