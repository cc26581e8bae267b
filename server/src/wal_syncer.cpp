// The background WAL sync (see wal_syncer.hpp).
#include "wal_syncer.hpp"

#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace exactly::server {

wal_syncer::wal_syncer(boost::asio::io_context& storage, sqlite3* db)
    : io_(storage), db_(db), thread_([this] { run(); }) {}

wal_syncer::~wal_syncer() {
  {
    std::lock_guard l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::uint64_t wal_syncer::begin_commit(std::vector<std::string> posted) {
  ++next_;
  if (!posted.empty()) {
    std::lock_guard l(m_);
    for (std::string& key : posted)
      posted_[std::move(key)] = next_;
  }
  visible_.store(next_);
  return next_;
}

std::uint64_t wal_syncer::posted_in(const std::string& key) const {
  std::lock_guard l(m_);
  const auto it = posted_.find(key);
  return it == posted_.end() ? 0 : it->second;
}

sqlite3_file* wal_syncer::wal_file() {
  if (sqlite3_file* f = wal_.load())
    return f;
  sqlite3_file* f = nullptr;
  // In WAL mode the "journal" is the WAL file, open for as long as the connection is.
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK || !f ||
      !f->pMethods)
    return nullptr;
  // The first sync runs here, on the storage thread: it also syncs the WAL's directory entry
  // (and clears the VFS's flag for it), so the background thread's syncs touch nothing but the
  // file's data.
  if (!sync_once(f))
    return nullptr;
  wal_.store(f);
  return f;
}

bool wal_syncer::sync_once(sqlite3_file* f) {
  const int rc = f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
  if (rc != SQLITE_OK) {
    spdlog::critical(
        "the WAL could not be synced (SQLite error {}): no answer that needs the "
        "disk goes out any more",
        rc);
    return false;
  }
  return true;
}

void wal_syncer::committed(std::uint64_t seq, std::function<void(bool)> then) {
  waiters_.emplace(seq, std::move(then));
  bool failed = false;
  {
    std::lock_guard l(m_);
    failed = failed_;
  }
  if (!failed && !wal_.load()) {
    // The first commit: synced here, before the thread ever touches the file. After a failed
    // sync none is tried again: a later fsync may succeed over pages the disk dropped.
    const bool ok = wal_file() != nullptr;
    {
      std::lock_guard l(m_);
      written_ = seq;
      if (ok)
        synced_.store(std::max(synced_.load(), seq));
      else
        failed_ = true;
    }
    boost::asio::post(io_, [this] { release(); });
    return;
  }
  {
    std::lock_guard l(m_);
    written_ = seq;
    failed = failed_;
  }
  if (failed)  // no sync comes any more: the waiters learn it now
    boost::asio::post(io_, [this] { release(); });
  else
    cv_.notify_one();
}

void wal_syncer::when_synced(std::uint64_t seq, std::function<void(bool)> then) {
  bool failed = false;
  {
    std::lock_guard l(m_);
    failed = failed_;
  }
  if (failed || seq <= synced_.load()) {
    then(!failed);
    return;
  }
  waiters_.emplace(seq, std::move(then));
}

void wal_syncer::run() {
  std::unique_lock l(m_);
  for (;;) {
    const auto due = [this] { return !failed_ && wal_.load() && written_ > synced_.load(); };
    cv_.wait(l, [&] { return stop_ || due(); });
    if (!due())
      return;  // stopping, with nothing left to sync
    const std::uint64_t target = written_;
    sqlite3_file* f = wal_.load();
    l.unlock();
    const bool ok = sync_once(f);
    l.lock();
    ++syncs_;
    if (ok && !failed_)
      synced_.store(std::max(synced_.load(), target));
    else
      failed_ = true;
    boost::asio::post(io_, [this] { release(); });
  }
}

void wal_syncer::release() {
  bool failed = false;
  const std::uint64_t synced = synced_.load();
  {
    std::lock_guard l(m_);
    failed = failed_;
    std::erase_if(posted_, [synced](const auto& p) { return p.second <= synced; });
  }
  // Waiters added while these run (a callback that commits) wait for a later release.
  auto end = failed ? waiters_.end() : waiters_.upper_bound(synced);
  std::multimap<std::uint64_t, std::function<void(bool)>> ready;
  ready.insert(std::make_move_iterator(waiters_.begin()), std::make_move_iterator(end));
  waiters_.erase(waiters_.begin(), end);
  for (auto& [seq, then] : ready)
    then(seq <= synced);
}

}  // namespace exactly::server
