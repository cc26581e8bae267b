// WAL checkpoints on a thread of their own, and the commit hook that asks for them
// (wal_checkpointer.hpp).
#include "wal_checkpointer.hpp"

#include "sqlite_pragmas.hpp"

#include <map>

#include <sqlite3.h>

namespace exactly::detail {

std::shared_ptr<wal_checkpointer> wal_checkpointer::of(const std::string& path,
                                                       sqlite::synchronous sync) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<wal_checkpointer>> running;
  const std::lock_guard lock(mutex);
  std::erase_if(running, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<wal_checkpointer>& slot = running[path];
  if (auto c = slot.lock())
    return c;
  auto c = std::make_shared<wal_checkpointer>(path, sync);
  slot = c;
  return c;
}

wal_checkpointer::wal_checkpointer(const std::string& path, sqlite::synchronous sync) {
  const int rc =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg =
        "open " + path + " to checkpoint: " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    throw sqlite::error(rc, msg);
  }
  // The checkpoint's fsyncs (the WAL before the copy, the database after it) as the writers'.
  sqlite3_exec(db_, synchronous_pragma(sync), nullptr, nullptr, nullptr);
  thread_ = std::thread([this] { run(); });
}

wal_checkpointer::~wal_checkpointer() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close(db_);
}

void wal_checkpointer::request() {
  {
    const std::lock_guard lock(mutex_);
    if (requested_)
      return;
    requested_ = true;
  }
  wake_.notify_one();
}

void wal_checkpointer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_)
      return;
    requested_ = false;
    lock.unlock();
    // PASSIVE: copies what no reader still needs, never waits for a writer or a reader. A
    // failure (the disk) shows in the writers' own commits; the WAL then waits for the next one.
    sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
  }
}

checkpoint_hook::checkpoint_hook(sqlite3* db, const std::string& path, sqlite::synchronous sync,
                                 int pages, int finish_pages)
    : checkpointer_(wal_checkpointer::of(path, sync)), pages_(pages), finish_pages_(finish_pages) {
  sqlite3_wal_hook(db, &checkpoint_hook::on_commit, this);  // replaces wal_autocheckpoint
}

int checkpoint_hook::on_commit(void* self, sqlite3* db, const char* schema, int frames) {
  const auto& h = *static_cast<checkpoint_hook*>(self);
  if (frames >= h.finish_pages_) {
    // As SQLite's own automatic checkpoint does, here: busy (the thread is copying) or failed,
    // the next commit tries again.
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (frames >= h.pages_) {
    h.checkpointer_->request();
  }
  return SQLITE_OK;
}

}  // namespace exactly::detail
