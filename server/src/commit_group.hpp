#pragma once
// Group commit on the storage thread: the requests that arrive while one group's COMMIT (and its
// fsync) is under way run together in the next group, each in its own savepoint, and each one's
// reply is released only once its whole group is committed. One fsync serves many requests;
// nothing is answered before it is on disk, except in an unflushed group: one begun by, and
// holding only, members that allow it (PUT and DELETE; durability::unflushed), which the next
// flushed commit makes durable with itself, in order. With a background sync (SQLite), a flushed
// group commits without waiting for the disk and its answers wait for the wal_syncer's next fsync,
// while the groups after it commit meanwhile.

#include <exactly/common/database.hpp>

#include "wal_syncer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace exactly::server {

// Where the time of one kind of committed group (flushed or unflushed) went, in microseconds
// summed over its requests and over its COMMITs.
struct group_times {
  std::int64_t requests = 0;  // the requests timed: the members of committed groups whose
                              // function returned
  // From being handed to the storage thread: until its turn began (its group's BEGIN in it, if
  // it opened the group); its own function (its statements); until its group was committed (and
  // on disk unless unflushed); until its answer left the storage thread, behind what was queued
  // there before.
  std::int64_t waiting_us = 0, running_us = 0, committed_us = 0, answered_us = 0;
  std::int64_t commit_us = 0;  // the groups' COMMITs (a background sync's wait not in it)
  group_times& operator+=(const group_times& o);
};

struct group_stats {
  std::int64_t groups = 0;     // COMMITs of groups that succeeded, flushed or not
  std::int64_t unflushed = 0;  // of those, committed without waiting for the disk
  std::int64_t requests = 0;   // requests answered from those groups (a 500 after a failed
                               // later RELEASE not among them: commit_groups::note_failed_alone)
  std::int64_t failures = 0;   // groups whose COMMIT failed (their requests got no answer)
  std::int64_t largest = 0;    // requests in the largest group
  group_times flushed_times, unflushed_times;
};

// Whether a request's commit must be flushed to disk before its answer goes out.
enum class commit_flush {
  required,   // the default: executions, user routes, anything the protocol must not lose
  may_defer,  // a crash may take it back (PUT, DELETE): see server_options::flush_every_commit
};

class commit_groups {
 public:
  // `grouped` = false commits each request on its own (a group of one), on the same path.
  // `flush_every_commit`: every group is flushed, whatever its members allowed.
  // `background_sync`: flushed groups are synced by a wal_syncer (grouped SQLite in WAL mode at
  // synchronous=FULL only; ignored otherwise).
  commit_groups(boost::asio::io_context& storage, database db, bool grouped,
                bool flush_every_commit = false, bool background_sync = false);

  // Runs `fn` in a savepoint of the open group (opening one) and waits until the group is
  // committed. With `own_savepoint` false, `fn` opens and ends its own savepoint and never leaves
  // a write of a failed step behind (connector::handle() does): one round trip less each way on
  // PostgreSQL. Returns nullopt when the group could not be committed: nothing of it was.
  // An exception from `fn` rolls back its savepoint only and propagates at once.
  // The group is flushed unless it began with, and has only, commit_flush::may_defer members.
  // The group's transaction is the outermost one on the connection: the connection's
  // after_commit() hooks registered by `fn` run once the group is committed, before any answer.
  // `handed_over`: when the request was handed to the storage thread (its wait is timed from
  // then; unset: from now). Call on the storage thread.
  template <class F>
  boost::asio::awaitable<std::optional<std::invoke_result_t<F>>> run(
      F fn, bool own_savepoint = true, commit_flush flush = commit_flush::required,
      std::chrono::steady_clock::time_point handed_over = {}) {
    std::shared_ptr<group> g = join(flush);
    if (!g)
      co_return std::nullopt;
    const auto began = std::chrono::steady_clock::now();  // after a group ahead was committed
    std::chrono::steady_clock::time_point ran;
    std::optional<std::invoke_result_t<F>> result;
    {
      // Ungrouped, even when `fn` throws: the group of one must not stay open. Declared before
      // `own`, so the savepoint is rolled back before the group commits.
      const flush_alone flush_after{grouped_ ? nullptr : this, g};
      std::optional<database_transaction> own;
      if (own_savepoint)
        own.emplace(db_);
      result.emplace(fn());
      // The engine ended the whole group on its own (SQLite: disk full, I/O error; PostgreSQL:
      // the connection lost): nothing of it can commit, and the savepoint is gone with it.
      if (!db_.in_transaction())
        co_return std::nullopt;
      if (own)
        own->commit();
      ran = std::chrono::steady_clock::now();
    }
    if (grouped_)
      co_await g->committed.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!g->committed_ok)
      co_return std::nullopt;
    note_times(*g, handed_over == decltype(handed_over){} ? began : handed_over, began, ran);
    co_return result;
  }

  // Commits the open group now if it is unflushed (its members are answered), so that what the
  // caller writes next is flushed: for work on the storage thread that writes without run() (the
  // sweeper, the outbox dispatcher, storage_executor::run), inside a flushed open group or in
  // transactions of its own. Call before writing. With the background sync it commits a flushed
  // open group too (that costs no fsync here, and its answers still wait for their sync), so the
  // caller reads only committed rows, numbered for wal_syncer's waits, and its own transaction is
  // flushed in its COMMIT.
  void require_flush() {
    if (open_ && (open_->unflushed || open_->sync_later))
      flush(std::shared_ptr<group>(open_));  // a copy: flush() resets open_
  }

  // Inside run()'s `fn` of a POST: a GET of `key` (route and id) read after the group's COMMIT
  // waits for its sync (wal_syncer::posted_in). Nothing without a background sync.
  void note_post(std::string key) {
    if (open_ && open_->sync_later)
      open_->posted.push_back(std::move(key));
  }
  // The background sync, or nullptr if flushed groups sync in their COMMIT.
  wal_syncer* syncer() { return syncer_.get(); }

  // A request of a committed group whose own writes failed at the group's next round trip
  // (pg::transaction::commit_later) and which is answered 500: no longer counted among the
  // group's requests (any thread, before its answer goes out).
  void note_failed_alone() {
    std::lock_guard lock(stats_mutex_);
    --stats_.requests;
  }
  // A copy of the counts (any thread).
  group_stats stats() const {
    std::lock_guard lock(stats_mutex_);
    return stats_;
  }
  // Whether every group is flushed (server_options::flush_every_commit).
  bool flushes_every_commit() const { return flush_every_commit_; }

 private:
  struct group {
    explicit group(boost::asio::io_context& io)
        : committed(io, boost::asio::steady_timer::time_point::max()) {}
    std::optional<database_transaction> tx;
    boost::asio::steady_timer committed;  // cancelled once the group's COMMIT returned
    bool committed_ok = false;            // the COMMIT succeeded
    bool unflushed = false;   // began unflushed: only commit_flush::may_defer members join it
    bool ended = false;       // flush() has run
    bool sync_later = false;  // flushed, by the wal_syncer after its COMMIT
    std::chrono::steady_clock::time_point answerable{};  // committed, and synced if sync_later
    std::vector<std::string> posted;  // sync_later: keys of its POSTs (note_post)
    std::int64_t size = 0;
  };
  // Flushes the group of one it holds when it goes out of scope (nothing when `self` is null).
  struct flush_alone {
    commit_groups* self;
    std::shared_ptr<group> g;
    ~flush_alone() {
      if (self)
        self->flush(g);
    }
  };

  // The open group a member with `member` may join, opened (and its COMMIT scheduled) if there is
  // none; nullptr if it failed. The choice is made when the group begins (SQLite sets it before
  // BEGIN): a group begun by a may_defer member is unflushed, and a required member arriving
  // while it is open commits it first and begins a flushed one; with the background sync, a
  // may_defer member arriving at a flushed group does the same the other way round.
  std::shared_ptr<group> join(commit_flush member);
  // Adds a member of committed `g` to its kind's times (group_times): handed over, begun, and its
  // function returned at `ran`; its answer leaves now.
  void note_times(const group& g, std::chrono::steady_clock::time_point handed_over,
                  std::chrono::steady_clock::time_point began,
                  std::chrono::steady_clock::time_point ran);
  // Commits `g` as it began, flushed or not (never throws: a failed COMMIT leaves it not
  // committed_ok), and releases its waiters; nothing the second time.
  void flush(const std::shared_ptr<group>& g) noexcept;

  boost::asio::io_context& io_;
  database db_;
  bool grouped_;
  bool flush_every_commit_;
  std::unique_ptr<wal_syncer> syncer_;
  std::shared_ptr<group> open_;
  mutable std::mutex stats_mutex_;  // guards stats_: other threads read them
  group_stats stats_;
};

}  // namespace exactly::server
