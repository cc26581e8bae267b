// The storage thread: start, stop, and blocking calls onto it (see storage_executor.hpp).
#include "storage_executor.hpp"

#include <boost/asio/post.hpp>

#include <future>

namespace exactly::server {

storage_executor::storage_executor(database db, bool group_commit, bool flush_every_commit)
    : groups_(io_, db, group_commit, flush_every_commit) {}

void storage_executor::start() {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

void storage_executor::stop(std::function<void()> last) {
  net::asio::post(io_, [this, last = std::move(last)] {
    last();
    work_.reset();
  });
  if (thread_.joinable())
    thread_.join();
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
