// Group commit on the storage thread: one COMMIT (one fsync, unless the group is unflushed) for
// the requests queued together.
#include "commit_group.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace exactly::server {
namespace {

std::int64_t micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace

group_times& group_times::operator+=(const group_times& o) {
  requests += o.requests;
  waiting_us += o.waiting_us;
  running_us += o.running_us;
  committed_us += o.committed_us;
  answered_us += o.answered_us;
  commit_us += o.commit_us;
  return *this;
}

commit_groups::commit_groups(boost::asio::io_context& storage, database db, bool grouped,
                             bool flush_every_commit, bool background_sync)
    : io_(storage), db_(db), grouped_(grouped), flush_every_commit_(flush_every_commit) {
  // The group's answers wait on the storage thread's io_context for the sync: groups only.
  if (background_sync && grouped && db.kind() == engine::sqlite && db.as_sqlite().can_defer_sync())
    syncer_ = std::make_unique<wal_syncer>(storage, db.as_sqlite().native());
}

std::shared_ptr<commit_groups::group> commit_groups::join(commit_flush member) {
  if (open_ && !db_.in_transaction()) {
    // The engine rolled the group back on its own (disk full, connection lost): nothing more
    // may join.
    return nullptr;
  }
  const bool unflushed = member == commit_flush::may_defer && !flush_every_commit_;
  // A member that needs the flush never joins an unflushed group; with the background sync, a
  // member that does not never joins a flushed group, whose answers wait for its sync: the open
  // group is committed first (a copy: flush() resets open_), which costs no fsync here.
  if (open_ && (open_->unflushed ? !unflushed : open_->sync_later && unflushed))
    flush(std::shared_ptr<group>(open_));
  if (!open_) {
    auto g = std::make_shared<group>(io_);
    g->unflushed = unflushed;
    g->sync_later = !unflushed && syncer_;
    try {
      // A group the wal_syncer flushes commits without a sync of its own.
      g->tx.emplace(db_, unflushed || g->sync_later ? durability::unflushed : durability::flushed);
    } catch (const std::exception& e) {
      spdlog::error("cannot begin a commit group: {}", e.what());
      return nullptr;
    }
    open_ = g;
    if (grouped_) {
      // Runs after every request already queued on the storage thread has joined.
      boost::asio::post(io_, [this, g] { flush(g); });
    }
  }
  ++open_->size;
  return open_;
}

void commit_groups::note_times(const group& g, std::chrono::steady_clock::time_point handed_over,
                               std::chrono::steady_clock::time_point began,
                               std::chrono::steady_clock::time_point ran) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(stats_mutex_);
  group_times& t = g.unflushed ? stats_.unflushed_times : stats_.flushed_times;
  ++t.requests;
  t.waiting_us += micros(began - handed_over);
  t.running_us += micros(ran - began);
  t.committed_us += micros(g.answerable - handed_over);
  t.answered_us += micros(now - handed_over);
}

void commit_groups::flush(const std::shared_ptr<group>& g) noexcept {
  if (g->ended)
    return;  // committed early (require_flush, or a flushed member arrived): the scheduled flush
  g->ended = true;
  if (open_ == g)
    open_.reset();
  // Numbered before its COMMIT: a read that sees the group waits for its sync.
  const std::uint64_t seq = g->sync_later ? syncer_->begin_commit(std::move(g->posted)) : 0;
  const auto committing = std::chrono::steady_clock::now();
  try {
    if (db_.in_transaction()) {
      g->tx->commit();
      g->committed_ok = true;
    }
  } catch (const std::exception& e) {
    spdlog::error("commit of a group of {} requests failed, none is answered: {}", g->size,
                  e.what());
  }
  g->tx.reset();
  const std::int64_t commit_us = micros(std::chrono::steady_clock::now() - committing);
  std::unique_lock counting(stats_mutex_);
  if (g->committed_ok) {
    ++stats_.groups;
    if (g->unflushed)
      ++stats_.unflushed;
    (g->unflushed ? stats_.unflushed_times : stats_.flushed_times).commit_us += commit_us;
    stats_.requests += g->size;
    stats_.largest = std::max(stats_.largest, g->size);
  } else {
    ++stats_.failures;
  }
  counting.unlock();
  if (!g->sync_later) {
    g->answerable = std::chrono::steady_clock::now();
    g->committed.cancel();
    return;
  }
  syncer_->committed(seq, [g](bool synced) {
    if (!synced)
      g->committed_ok = false;  // committed, but not known to be on disk: not answered
    g->answerable = std::chrono::steady_clock::now();
    g->committed.cancel();
  });
}

}  // namespace exactly::server
