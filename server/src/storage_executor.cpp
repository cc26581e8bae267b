// The storage thread: start, stop, blocking calls onto it, and waiting for the background sync
// (see storage_executor.hpp).
#include "storage_executor.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <future>
#include <memory>

namespace exactly::server {

storage_executor::storage_executor(database db, bool group_commit, bool flush_every_commit,
                                   bool background_sync)
    : groups_(io_, db, group_commit, flush_every_commit, background_sync) {}

void storage_executor::start(std::function<void()> on_start) {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this, on_start = std::move(on_start)] {
    if (on_start)
      on_start();
    io_.run();
  });
}

void storage_executor::stop(std::function<void()> last) {
  net::asio::post(io_, [this, last = std::move(last)] {
    last();
    work_.reset();
  });
  if (thread_.joinable())
    thread_.join();
}

net::asio::awaitable<bool> storage_executor::durable() {
  wal_syncer* syncer = groups_.syncer();
  // Taken now (after the caller's read): every commit a read saw was numbered before.
  if (!syncer)
    co_return true;
  co_return co_await until_synced(syncer->visible());
}

net::asio::awaitable<bool> storage_executor::posts_durable(const std::string& key) {
  wal_syncer* syncer = groups_.syncer();
  // A commit holding a POST of `key` is numbered, and its key noted, before its COMMIT: a read
  // that saw it finds it here until it is synced.
  if (!syncer)
    co_return true;
  co_return co_await until_synced(syncer->posted_in(key));
}

net::asio::awaitable<bool> storage_executor::until_synced(std::uint64_t seq) {
  wal_syncer* syncer = groups_.syncer();
  if (seq <= syncer->synced())
    co_return true;
  co_return co_await net::asio::co_spawn(
      io_,
      [this, syncer, seq]() -> net::asio::awaitable<bool> {
        auto done = std::make_shared<std::optional<bool>>();
        auto timer = std::make_shared<net::asio::steady_timer>(
            io_, net::asio::steady_timer::time_point::max());
        syncer->when_synced(seq, [done, timer](bool synced) {
          *done = synced;
          timer->cancel();
        });
        if (!*done)
          co_await timer->async_wait(net::asio::as_tuple(net::asio::use_awaitable));
        co_return done->value_or(false);
      },
      net::asio::use_awaitable);
}

void storage_executor::run_and_wait(std::function<void()> fn) {
  std::promise<void> done;
  net::asio::post(io_, [&] {
    try {
      groups_.require_flush();
      fn();
      done.set_value();
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  done.get_future().get();
}

}  // namespace exactly::server
