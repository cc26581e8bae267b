// The sweeper and the outbox dispatcher loops on the storage thread (see background_jobs.hpp).
#include "background_jobs.hpp"

#include "spawn_logged.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace exactly::server {

using namespace exactly::net;

background_jobs::background_jobs(storage_executor& storage, connector& c,
                                 std::chrono::milliseconds sweep_interval,
                                 std::chrono::milliseconds dispatch_interval)
    : storage_(storage),
      connector_(c),
      sweep_interval_(sweep_interval),
      dispatch_interval_(dispatch_interval),
      sweep_timer_(storage.context()),
      dispatch_timer_(storage.context()) {}

void background_jobs::start() {
  // Before the storage thread runs; cleared by stop(), on it: the messages of each durable
  // execution are dispatched at once instead of at the next poll.
  connector_.on_durable_execution([this] { wake_dispatcher(); });
  spawn_logged(storage_.context(), sweep_loop());
  spawn_logged(storage_.context(), dispatch_loop());
}

void background_jobs::stop() {
  connector_.on_durable_execution(nullptr);
  stopping_ = true;
  sweep_timer_.cancel();
  dispatch_timer_.cancel();
}

void background_jobs::wake_dispatcher() {
  // Executions commit on every storage thread; the timer is this one's.
  if (storage_.context().get_executor().running_in_this_thread())
    dispatch_timer_.cancel();
  else
    asio::post(storage_.context(), [this] { dispatch_timer_.cancel(); });
}

asio::awaitable<void> background_jobs::sweep_loop() {
  for (;;) {
    sweep_timer_.expires_after(sweep_interval_);
    co_await sweep_timer_.async_wait(use_tuple);
    if (stopping_)
      co_return;
    try {
      storage_.require_flush();  // the sweep always writes (the clock floor)
      const sweep_result r = connector_.sweep();
      if (r.expired_staged + r.expired_responses + r.purged_tombstones > 0) {
        spdlog::info("sweeper: {} staged expired, {} responses expired, {} tombstones purged",
                     r.expired_staged, r.expired_responses, r.purged_tombstones);
      }
    } catch (const std::exception& e) {
      spdlog::error("sweeper failed: {}", e.what());
    }
  }
}

asio::awaitable<void> background_jobs::dispatch_loop() {
  constexpr int batch = 64;
  for (;;) {
    std::size_t handled = 0;
    try {
      storage_.require_flush();  // what it writes must not join an unflushed group
      if (connector_.outbox_pending() > 0) {
        // A message goes out only once the execution that sent it is on disk: those sent so far
        // once every commit so far is (the storage thread commits meanwhile).
        const std::int64_t sent = connector_.outbox_last_seq();
        if (!co_await storage_.durable())
          throw std::runtime_error("the WAL could not be synced");
        if (stopping_)
          co_return;
        storage_.require_flush();
        handled = connector_.dispatch_outbox(batch, sent);
      }
    } catch (const std::exception& e) {
      spdlog::error("outbox dispatch failed: {}", e.what());
    }
    if (stopping_)
      co_return;
    if (handled == batch) {
      co_await asio::post(storage_.context(), asio::use_awaitable);  // let requests in between
      continue;
    }
    dispatch_timer_.expires_after(dispatch_interval_);
    co_await dispatch_timer_.async_wait(use_tuple);  // cancelled by wake_dispatcher()
    if (stopping_)
      co_return;
  }
}

}  // namespace exactly::server
