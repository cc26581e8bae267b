// WAL checkpoints on a thread of their own, and the commit hook that asks for them
// (wal_checkpointer.hpp).
#include "wal_checkpointer.hpp"

#include "sqlite_pragmas.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <stdexcept>
#include <string_view>

#include <sqlite3.h>

namespace exactly::detail {

std::shared_ptr<wal_checkpointer> wal_checkpointer::of(const std::string& file) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<wal_checkpointer>> running;
  const std::lock_guard lock(mutex);
  std::erase_if(running, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<wal_checkpointer>& slot = running[file];
  if (auto c = slot.lock())
    return c;
  auto c = std::make_shared<wal_checkpointer>(file);
  slot = c;
  return c;
}

wal_checkpointer::wal_checkpointer(const std::string& file) : file_(file) {
  int rc =
      sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db_, 10000);
    // A checkpoint's fsyncs (the WAL before the copy, the database after it) are the same at
    // NORMAL, FULL or EXTRA; only OFF leaves them out, which no writer's choice makes safe here.
    rc =
        sqlite3_exec(db_, synchronous_pragma(sqlite::synchronous::full), nullptr, nullptr, nullptr);
  }
  sqlite3_stmt* mode = nullptr;
  if (rc == SQLITE_OK)  // also opens the WAL on this connection, without which nothing is copied
    rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode", -1, &mode, nullptr);
  if (rc == SQLITE_OK) {
    const unsigned char* text =
        sqlite3_step(mode) == SQLITE_ROW ? sqlite3_column_text(mode, 0) : nullptr;
    const bool wal = text && std::string_view(reinterpret_cast<const char*>(text)) == "wal";
    rc = sqlite3_finalize(mode);
    if (rc == SQLITE_OK && !wal)
      rc = SQLITE_MISUSE;
  } else {
    sqlite3_finalize(mode);
  }
  if (rc != SQLITE_OK) {
    std::string msg = "open " + file +
                      " to checkpoint its WAL: " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    throw sqlite::error(rc, msg);
  }
  thread_ = std::thread([this] { run(); });
}

wal_checkpointer::~wal_checkpointer() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  // This connection closes last of the process's on the file, since each of them holds the
  // checkpointer: SQLite would checkpoint the WAL there, and delete it, after a failure too.
  if (failed_)
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_close(db_);
}

void wal_checkpointer::after_commit(sqlite3* db, const char* schema, int frames, int pages,
                                    int finish_pages) {
  if (failed_)
    return;
  if (frames < pages) {  // the WAL grows until it starts over, so this one is new
    if (wal_noted_.load(std::memory_order_relaxed)) {
      const std::lock_guard lock(mutex_);
      copied_ = -1;
      finished_here_ = false;
      wal_noted_ = false;
    }
    return;
  }
  const bool finish = frames >= finish_pages;
  bool early = false;
  {
    std::unique_lock lock(mutex_);
    // copied_ <= frames: a note of the WAL before, whose start over no small commit saw, is left.
    early = !finish && !finished_here_ && copied_ >= 0 && copied_ <= frames &&
            frames - copied_ <= pages / 4;
    if (early) {
      requested_ = false;  // this commit copies the rest: no other round is needed for it
    } else if (!finish) {
      if (requested_)
        return;
      requested_ = true;
      lock.unlock();
      wake_.notify_one();
      return;
    }
  }
  int log_frames = -1;
  int copied = -1;
  if (checkpoint(db, schema, log_frames, copied) && early) {
    // Once per WAL: a reader that holds the copy back would otherwise have commit after commit
    // pay a checkpoint's fsyncs; the WAL then starts over at finish_pages.
    const std::lock_guard lock(mutex_);
    finished_here_ = true;
    copied_ = -1;
  }
}

bool wal_checkpointer::checkpoint(sqlite3* db, const char* schema, int& log_frames, int& copied) {
  const std::unique_lock lock(checkpointing_, std::try_to_lock);
  if (!lock || failed_)  // another one is under way, which SQLite would refuse as busy
    return false;
  const int rc =
      sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
  return note(rc, log_frames, db);
}

bool wal_checkpointer::note(int rc, int log_frames, sqlite3* db) {
  // Busy: another checkpoint runs (a process's); locked: `db` has a statement open. Neither is
  // the disk's doing, and the next ask tries again.
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
    return false;
  if (rc == SQLITE_OK && log_frames >= 0)
    return true;
  if (!failed_.exchange(true)) {
    spdlog::critical(
        "checkpoint of {} failed ({}): no checkpoint of it runs any more while this process "
        "has it open, the WAL keeps every frame and grows until then",
        file_, rc == SQLITE_OK ? "not in WAL mode" : sqlite3_errmsg(db));
  }
  return false;
}

void wal_checkpointer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_)
      return;
    requested_ = false;
    lock.unlock();
    int log_frames = -1;
    int copied = -1;
    const bool ran = checkpoint(db_, nullptr, log_frames, copied);
    lock.lock();
    // Noted only while commits come (one asked meanwhile): a WAL copied to its end with none
    // meanwhile starts over at the next commit by itself.
    if (ran && requested_ && !finished_here_) {
      copied_ = copied;
      wal_noted_ = true;
    }
    ++rounds_;
  }
}

checkpoint_hook::checkpoint_hook(sqlite3* db, int pages, int finish_pages)
    : checkpointer_(wal_checkpointer::of(sqlite3_db_filename(db, "main"))),
      pages_(pages),
      finish_pages_(finish_pages) {
  sqlite3_wal_hook(db, &checkpoint_hook::on_commit, this);  // replaces wal_autocheckpoint
}

int checkpoint_hook::on_commit(void* self, sqlite3* db, const char* schema, int frames) {
  const auto& h = *static_cast<checkpoint_hook*>(self);
  h.checkpointer_->after_commit(db, schema, frames, h.pages_, h.finish_pages_);
  return SQLITE_OK;
}

void check_checkpoint_options(const sqlite::options& o) {
  if (o.checkpoint_pages < 0 ||
      (o.checkpoint_pages > 0 && o.finish_checkpoint_pages <= o.checkpoint_pages)) {
    throw std::invalid_argument(
        "sqlite::options: checkpoint_pages must be 0 or above 0, and finish_checkpoint_pages "
        "above it");
  }
}

std::unique_ptr<checkpoint_hook> install_checkpoints(sqlite3* db, const sqlite::options& o) {
  if (o.checkpoint_pages == 0)
    return nullptr;
  try {
    return std::make_unique<checkpoint_hook>(db, o.checkpoint_pages, o.finish_checkpoint_pages);
  } catch (const sqlite::error& e) {
    spdlog::warn("{}: checkpoints stay in the committing connection", e.what());
    return nullptr;
  }
}

}  // namespace exactly::detail
