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

void wal_checkpointer::request() {
  {
    const std::lock_guard lock(mutex_);
    if (requested_)
      return;
    requested_ = true;
  }
  wake_.notify_one();
}

void wal_checkpointer::checkpoint_here(sqlite3* db, const char* schema) {
  {
    // Until the thread copies again, no commit of this WAL checkpoints early once more: a reader
    // that holds the copy back would otherwise have every commit pay a checkpoint's fsyncs.
    const std::lock_guard lock(copied_mutex_);
    copied_any_ = false;
  }
  int log_frames = -1;
  const int rc =
      sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, &log_frames, nullptr);
  note(rc, log_frames, db);
}

bool wal_checkpointer::copied_all_but(int frames, int rest) {
  if (!copied_any_.load(std::memory_order_relaxed))
    return false;
  const std::lock_guard lock(copied_mutex_);
  return copied_any_ && copied_log_ <= frames && frames - copied_frames_ <= rest;
}

void wal_checkpointer::wal_started_over() {
  if (!copied_any_.load(std::memory_order_relaxed))
    return;
  const std::lock_guard lock(copied_mutex_);
  ++wal_starts_;
  copied_any_ = false;
}

void wal_checkpointer::checkpoint_on_thread() {
  int starts = 0;
  {
    const std::lock_guard lock(copied_mutex_);
    starts = wal_starts_;
  }
  int log_frames = -1;
  int copied = -1;
  const int rc =
      sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
  note(rc, log_frames, db_);
  const std::lock_guard lock(copied_mutex_);
  if (rc == SQLITE_OK && log_frames >= 0 && wal_starts_ == starts) {  // else of a WAL now gone
    copied_log_ = log_frames;
    copied_frames_ = copied;
    copied_any_ = true;
  }
}

void wal_checkpointer::note(int rc, int log_frames, sqlite3* db) {
  // Busy: another checkpoint runs (the thread, or a writer's); the next ask tries again.
  if (rc == SQLITE_BUSY || (rc == SQLITE_OK && log_frames >= 0))
    return;
  if (!failed_.exchange(true)) {
    spdlog::critical(
        "checkpoint of {} failed ({}): no checkpoint of it runs any more while this process "
        "has it open, the WAL keeps every frame and grows until then",
        file_, rc == SQLITE_OK ? "not in WAL mode" : sqlite3_errmsg(db));
  }
}

void wal_checkpointer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_)
      return;
    requested_ = false;
    lock.unlock();
    if (!failed_)
      checkpoint_on_thread();
    lock.lock();
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
  if (h.checkpointer_->failed())
    return SQLITE_OK;
  if (frames < h.pages_)  // the WAL grows until it starts over, so this one is new
    h.checkpointer_->wal_started_over();
  else if (frames >= h.finish_pages_ || h.checkpointer_->copied_all_but(frames, h.pages_ / 4))
    h.checkpointer_->checkpoint_here(db, schema);
  else
    h.checkpointer_->request();
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
