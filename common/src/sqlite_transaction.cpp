// The SQLite wrapper's transactions and savepoints, and the commit hooks they run (see sqlite.hpp).
#include <exactly/common/sqlite.hpp>

#include "commit_hooks.hpp"
#include "sqlite_pragmas.hpp"

#include <string>

#include <sqlite3.h>

namespace exactly::sqlite {

using exactly::detail::synchronous_pragma;

transaction::transaction(connection& db, mode m, durability d) : db_(&db), level_(db.depth_ + 1) {
  // Cached statements: a request in a commit group opens and releases two savepoints.
  if (level_ == 1) {
    // SQLite refuses to change the setting inside a transaction: it is chosen before BEGIN.
    if (d == durability::unflushed && db.can_defer_sync()) {
      db.prepare("PRAGMA synchronous=NORMAL").run();
      db.sync_deferred_ = true;
    }
    try {
      db.prepare(m == mode::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED").run();
    } catch (...) {
      db.restore_sync();
      throw;
    }
  } else {
    db.prepare("SAVEPOINT exactly_" + std::to_string(level_)).run();
  }
  ++db.depth_;
}

transaction::~transaction() {
  if (!done_)
    rollback();
}

void transaction::rollback() noexcept {
  --db_->depth_;
  done_ = true;
  db_->hooks_->rolled_back(level_);
  db_->reset_all();
  if (level_ == 1) {
    sqlite3_exec(db_->native(), "ROLLBACK", nullptr, nullptr, nullptr);
    db_->restore_sync();
    return;
  }
  // Fails harmlessly when SQLite already rolled the whole transaction back (SQLITE_FULL, I/O).
  const std::string name = "exactly_" + std::to_string(level_);
  sqlite3_exec(db_->native(), ("ROLLBACK TO " + name + "; RELEASE " + name).c_str(), nullptr,
               nullptr, nullptr);
}

void connection::restore_sync() noexcept {
  // Autocommit statements and flushed transactions after it are synced as configured again.
  // Should this fail, the flag stays and the next transaction's end tries once more; until then
  // commits on this connection may be unflushed, which no caller relies on.
  if (sync_deferred_ &&
      sqlite3_exec(db_, synchronous_pragma(sync_), nullptr, nullptr, nullptr) == SQLITE_OK)
    sync_deferred_ = false;
}

void transaction::commit() {
  if (level_ == 1) {
    db_->reset_all();
    db_->prepare("COMMIT").run();  // on failure the destructor rolls back
  } else {
    db_->prepare("RELEASE exactly_" + std::to_string(level_)).run();
  }
  --db_->depth_;
  done_ = true;
  if (level_ > 1) {
    db_->hooks_->released(level_);
    return;
  }
  db_->restore_sync();
  db_->hooks_->committed();
}

}  // namespace exactly::sqlite
