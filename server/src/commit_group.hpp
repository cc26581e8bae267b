#pragma once
// Group commit on the storage thread: the requests that arrive while one group's COMMIT (and its
// fsync) is under way run together in the next group, each in its own savepoint, and each one's
// reply is released only once its whole group is durable. One fsync serves many requests;
// nothing is ever answered before it is on disk.

#include <exactly/common/database.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

namespace exactly::server {

struct group_stats {
  std::int64_t groups = 0;    // COMMITs that made a group durable
  std::int64_t requests = 0;  // requests answered from those groups
  std::int64_t failures = 0;  // groups whose COMMIT failed (their requests got no answer)
  std::int64_t largest = 0;   // requests in the largest group
};

class commit_groups {
 public:
  // `grouped` = false commits each request on its own (a group of one), on the same path.
  commit_groups(boost::asio::io_context& storage, database db, bool grouped);

  // Runs `fn` in a savepoint of the open group (opening one) and waits until the group is
  // committed. With `own_savepoint` false, `fn` opens and ends its own savepoint and never leaves
  // a write of a failed step behind (connector::handle() does): one round trip less each way on
  // PostgreSQL. Returns nullopt when the group could not be made durable: nothing of it was
  // committed. An exception from `fn` rolls back its savepoint only and propagates at once.
  // The group's transaction is the outermost one on the connection: the connection's
  // after_commit() hooks registered by `fn` run once the group is durable, before any answer.
  // Call on the storage thread.
  template <class F>
  boost::asio::awaitable<std::optional<std::invoke_result_t<F>>> run(F fn,
                                                                     bool own_savepoint = true) {
    std::shared_ptr<group> g = join();
    if (!g)
      co_return std::nullopt;
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
    }
    if (grouped_)
      co_await g->committed.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!g->durable)
      co_return std::nullopt;
    co_return result;
  }

  const group_stats& stats() const { return stats_; }

 private:
  struct group {
    explicit group(boost::asio::io_context& io)
        : committed(io, boost::asio::steady_timer::time_point::max()) {}
    std::optional<database_transaction> tx;
    boost::asio::steady_timer committed;  // cancelled once the group's COMMIT returned
    bool durable = false;
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

  // The open group, opened (and its COMMIT scheduled) if there is none; nullptr if it failed.
  std::shared_ptr<group> join();
  // Commits `g` (never throws: a failed COMMIT leaves it not durable) and releases its waiters.
  void flush(const std::shared_ptr<group>& g) noexcept;

  boost::asio::io_context& io_;
  database db_;
  bool grouped_;
  std::shared_ptr<group> open_;
  group_stats stats_;
};

}  // namespace exactly::server
