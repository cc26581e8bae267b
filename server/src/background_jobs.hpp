#pragma once
// The storage thread's own work: the sweeper and the outbox dispatcher loops.

#include <exactly/server/connector.hpp>

#include "asio_beast.hpp"
#include "storage_executor.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>

namespace exactly::server {

class background_jobs {
 public:
  // Both loops run on `storage`, the thread that owns `c`'s connection; what they write inside an
  // open commit group makes it commit flushed.
  background_jobs(storage_executor& storage, connector& c, std::chrono::milliseconds sweep_interval,
                  std::chrono::milliseconds dispatch_interval);
  // Spawns both loops; from now on each durable execution of the connector wakes the dispatcher.
  void start();
  // Ends both loops and the wake-ups (storage thread).
  void stop();
  // Dispatches at once instead of at the next poll (any storage thread: the wake-up is posted
  // to this one): a fresh execution may have sent messages.
  void wake_dispatcher();

 private:
  // Sweeps every sweep interval until stop().
  net::asio::awaitable<void> sweep_loop();
  // Dispatches due messages, then waits for the dispatch interval or a wake-up, until stop().
  net::asio::awaitable<void> dispatch_loop();

  storage_executor& storage_;
  connector& connector_;
  std::chrono::milliseconds sweep_interval_, dispatch_interval_;
  net::asio::steady_timer sweep_timer_, dispatch_timer_;
  bool stopping_ = false;
};

}  // namespace exactly::server
