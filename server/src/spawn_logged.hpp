#pragma once
// Detached coroutines whose failure is logged instead of lost.

#include "asio_beast.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <utility>

namespace exactly::server {

// Logs the exception a detached task ended with, if any.
inline void log_task_failure(std::exception_ptr e) {
  if (!e)
    return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    spdlog::error("background task failed: {}", x.what());
  }
}

// Starts `task` on `executor`, detached; a failure is logged.
template <class Executor, class T>
void spawn_logged(Executor& executor, net::asio::awaitable<T> task) {
  net::asio::co_spawn(executor, std::move(task), log_task_failure);
}

}  // namespace exactly::server
