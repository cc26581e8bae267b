#pragma once
// The storage thread: its io_context, its commit groups, and running a function there.

#include <exactly/common/database.hpp>

#include "asio_beast.hpp"
#include "commit_group.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <thread>
#include <tuple>
#include <type_traits>

namespace exactly::server {

class storage_executor {
 public:
  // `db`: the connection every storage call uses; `group_commit`, `flush_every_commit`,
  // `background_sync`: see server_options.
  storage_executor(database db, bool group_commit, bool flush_every_commit = false,
                   bool background_sync = false);
  storage_executor(const storage_executor&) = delete;
  storage_executor& operator=(const storage_executor&) = delete;

  // The storage thread's io_context (for its timers).
  net::asio::io_context& context() { return io_; }
  // Starts the storage thread, which first runs `on_start` (when set).
  void start(std::function<void()> on_start = nullptr);
  // Runs `last` on the storage thread after the work queued so far, lets the thread end once
  // its remaining work is done, and joins it.
  void stop(std::function<void()> last);

  // Runs `fn` on the storage thread and awaits its result (rethrowing what it throws). An open
  // unflushed commit group is committed first, so what `fn` writes is flushed.
  template <class F>
  net::asio::awaitable<std::invoke_result_t<F>> run(F fn) {
    using R = std::invoke_result_t<F>;
    co_return co_await net::asio::co_spawn(
        io_,
        [this, fn = std::move(fn)]() mutable -> net::asio::awaitable<R> {
          groups_.require_flush();
          co_return fn();
        },
        net::asio::use_awaitable);
  }
  // Runs `fn` on the storage thread in the open commit group and awaits the group's COMMIT
  // (`own_savepoint`, `flush`: see commit_groups::run).
  // Gives what `fn` threw (its writes rolled back), else its result, which is nullopt when the
  // group could not be committed.
  template <class F>
  net::asio::awaitable<std::tuple<std::exception_ptr, std::optional<std::invoke_result_t<F>>>>
  run_in_commit_group(F fn, bool own_savepoint = true,
                      commit_flush flush = commit_flush::required) {
    co_return co_await net::asio::co_spawn(
        io_, groups_.run(std::move(fn), own_savepoint, flush, std::chrono::steady_clock::now()),
        net::use_tuple);
  }
  // Runs `fn` on the running storage thread and blocks until it returns, rethrowing what it
  // throws; an open unflushed commit group is committed first, as with run(). Call from another
  // thread.
  void run_and_wait(std::function<void()> fn);
  // Commits the open commit group now if it is unflushed (commit_groups::require_flush), so that
  // what the caller writes next is flushed. Storage thread; call before writing.
  void require_flush() { groups_.require_flush(); }
  // Any thread: waits until every commit begun so far (all a read made before may have seen) is
  // on disk, without holding the storage thread; false if that sync failed (what depends on
  // them must not go out).
  net::asio::awaitable<bool> durable();
  // Any thread, after a GET's read of `key` (route and id): waits until every commit holding a
  // POST of it is on disk (commit_groups::note_post); false if that sync failed.
  net::asio::awaitable<bool> posts_durable(const std::string& key);
  // Storage thread, inside a commit group's function: see commit_groups::note_post.
  void note_post(std::string key) { groups_.note_post(std::move(key)); }
  // Any thread: see commit_groups::note_failed_alone.
  void note_failed_alone() { groups_.note_failed_alone(); }
  // Whether every commit group is flushed (server_options::flush_every_commit).
  bool flushes_every_commit() const { return groups_.flushes_every_commit(); }
  // Commit group counts (any thread).
  group_stats group_counts() const { return groups_.stats(); }

 private:
  // Waits (any thread) until the commits up to `seq` are synced; false if a sync failed.
  net::asio::awaitable<bool> until_synced(std::uint64_t seq);

  net::asio::io_context io_{1};
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;
  commit_groups groups_;  // storage thread only
  std::thread thread_;
};

}  // namespace exactly::server
