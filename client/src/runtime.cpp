// Worker threads that drive endpoints until stopped.
#include <exactly/client/runtime.hpp>

#include "client_metrics.hpp"
#include "endpoint_core.hpp"
#include "publish_claims.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace exactly::client {

runtime::runtime(std::string db_path, sqlite::options db_opts, setup_fn setup, runtime_options opts)
    : runtime(
          [db_path = std::move(db_path), db_opts](std::shared_ptr<void>& keep) {
            auto db = std::make_shared<sqlite::connection>(db_path, db_opts);
            keep = db;
            return database(*db);
          },
          [setup = std::move(setup)](database db) { return setup(db.as_sqlite()); },
          std::move(opts)) {}

runtime::runtime(pg::options db_opts, pg_setup_fn setup, runtime_options opts)
    : runtime(
          [db_opts = std::move(db_opts)](std::shared_ptr<void>& keep) {
            auto db = std::make_shared<pg::connection>(db_opts);
            keep = db;
            return database(*db);
          },
          [setup = std::move(setup)](database db) { return setup(db.as_postgres()); },
          std::move(opts)) {}

runtime::runtime(connect_fn connect, any_setup_fn setup, runtime_options opts)
    : setup_([connect, setup = std::move(setup)](std::shared_ptr<void>& keep) {
        return setup(connect(keep));
      }),
      opts_(std::move(opts)),
      metrics_(std::make_shared<client_metrics>(connect)),
      claims_(std::make_shared<publish_claims>()) {}

runtime::~runtime() {
  stop();
}

void runtime::start() {
  if (!opts_.metrics_address.empty() && metrics_port_ == 0)
    metrics_port_ = metrics_->serve(opts_.metrics_address);
  // spdlog's registry is made here, before the workers that log start, not by the first two of
  // them at once (safe, a function-local static, but in a library ThreadSanitizer cannot see).
  spdlog::default_logger_raw();
  const role workers = opts_.publishers > 0 ? role::handlers : role::both;
  for (int i = 0; i < opts_.workers; ++i)
    threads_.emplace_back([this, workers] { run_worker(workers); });
  for (int i = 0; i < opts_.publishers; ++i)
    threads_.emplace_back([this] { run_worker(role::publisher); });
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] {
    return ready_ == opts_.workers + std::max(opts_.publishers, 0) || setup_error_;
  });
  if (setup_error_) {
    const auto e = setup_error_;
    lock.unlock();
    stop();
    std::rethrow_exception(e);
  }
}

void runtime::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable())
      t.join();
  }
  threads_.clear();
}

void runtime::notify() {
  {
    std::lock_guard lock(mutex_);
    ++notified_;
    ++publish_wakes_;
  }
  wake_.notify_all();
}

std::string runtime::metrics_text() {
  return metrics_->text();
}

void runtime::run_worker(role r) {
  std::shared_ptr<void> db;  // the worker's connection, outliving its endpoints
  std::vector<std::unique_ptr<endpoint>> endpoints;
  try {
    endpoints = setup_(db);
    for (auto& ep : endpoints) {
      core_of(*ep).metrics = metrics_;
      core_of(*ep).claims = claims_;
      metrics_->add_endpoint(ep->name());
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!setup_error_)
      setup_error_ = std::current_exception();
    wake_.notify_all();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    ++ready_;
  }
  wake_.notify_all();
  std::optional<std::chrono::steady_clock::time_point> storage_logged;  // the last storage error
  for (;;) {
    std::uint64_t seen = 0;  // a notify() from now on makes this turn's idle wait short
    {
      std::lock_guard lock(mutex_);
      if (stopping_)
        return;
      seen = r == role::publisher ? publish_wakes_ : notified_;
    }
    std::size_t done = 0;
    bool threw = false;
    // Each batch and publishing turn apart: one that fails (rolled back whole, tried again after
    // a pause) does not keep the worker's other endpoints from running. False if it threw.
    const auto turn = [&](const auto& run) {
      try {
        done += run();
        return true;
      } catch (const storage_error& e) {  // storage busy or failing, or a write refused
        const auto now = std::chrono::steady_clock::now();
        if (!storage_logged || now - *storage_logged >= std::chrono::seconds(10)) {
          storage_logged = now;
          spdlog::warn(
              "client runtime worker: {}; that batch (or the message it ran alone) did not"
              " commit, retrying after a pause (logged at most every 10 s)",
              e.what());
        }
      } catch (const std::exception& e) {
        spdlog::error("client runtime worker: {}; nothing of that batch committed, retrying",
                      e.what());
      }
      threw = true;
      return false;
    };
    const auto wake = [this](bool handlers, bool publishers) {
      {
        std::lock_guard lock(mutex_);
        notified_ += handlers ? 1 : 0;
        publish_wakes_ += publishers ? 1 : 0;
      }
      wake_.notify_all();
    };
    for (auto& ep : endpoints) {
      if (r != role::publisher)
        turn([&] { return ep->process_due(opts_.batch); });
      if (r != role::handlers) {
        // Follow-ups queued with their POST's answer, and messages the follow-ups run in the
        // turn sent (counted also when rolled back since: one wake too many), are the handlers'
        // workers' at once, before the next endpoint's requests go out.
        const std::uint64_t appended = core_of(*ep).queues.appended();
        if (turn([&] { return ep->publish_due(opts_.batch); }) && r == role::publisher &&
            core_of(*ep).queues.appended() != appended)
          wake(true, false);
      }
    }
    // Committed steps for the publishers, and messages handlers sent for the other handlers'
    // workers: no idle wait for them. A batch that threw may have committed some of its messages
    // alone first (process_due): the publishers are woken, the other handlers' workers only when
    // this turn committed something, so that workers failing together still pause.
    if ((done > 0 || threw) && r == role::handlers)
      wake(done > 0, true);
    if (done == 0) {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, opts_.idle_poll, [&] {
        return stopping_ || (r == role::publisher ? publish_wakes_ : notified_) != seen;
      });
    }
  }
}

}  // namespace exactly::client
