#pragma once
// Runs endpoints continuously with N worker threads, each with its own connection to the same
// database (SQLite or PostgreSQL), until stop(). Workers share the queues safely: a message is
// handled by the first worker whose transaction finds it, and every protocol step moves by a
// conditional transition. A worker whose turn throws (storage or anything else) logs it, pauses and
// goes on: what the turn did not commit is done again.

#include <exactly/client/endpoint.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace exactly::client {

struct runtime_options {
  int workers = 1;                          // concurrent handlers
  std::chrono::milliseconds idle_poll{10};  // wait when nothing is due (see runtime::notify)
  int batch = 16;                           // messages/steps a worker takes per turn
  // Threads that only publish (POSTs with their follow-ups, re-PUTs, DELETEs) while the workers
  // only run handlers, so the two overlap: more invocations in flight. 0: each worker does both.
  int publishers = 0;
  // Serves metrics_text() at http://<metrics_address>/metrics from start() on (e.g.
  // "127.0.0.1:9464"; port 0 picks a free one, see metrics_port()); "" serves nothing.
  std::string metrics_address{};
};

class client_metrics;
class publish_claims;

class runtime {
 public:
  // Builds one worker's endpoints on that worker's connection; called once per worker thread.
  using setup_fn = std::function<std::vector<std::unique_ptr<endpoint>>(sqlite::connection&)>;
  using pg_setup_fn = std::function<std::vector<std::unique_ptr<endpoint>>(pg::connection&)>;

  // Workers on the SQLite database at `db_path`, each opening it with `db_opts`.
  runtime(std::string db_path, sqlite::options db_opts, setup_fn setup, runtime_options opts = {});
  // Workers on PostgreSQL, each with a connection of its own made with `db_opts`. Workers (and
  // processes) sharing a queue take each message with FOR UPDATE SKIP LOCKED.
  runtime(pg::options db_opts, pg_setup_fn setup, runtime_options opts = {});
  ~runtime();  // stop()
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Starts the workers. Throws what a worker's setup throws (the runtime is then stopped).
  void start();
  // Graceful: each worker finishes the message or step in hand, then returns. Idempotent.
  void stop();
  // Idle workers look for due work now instead of after idle_poll: call it after queuing a
  // message from outside the runtime (endpoint::send on another connection). Any thread.
  void notify();

  // The client's metrics in the Prometheus text format (docs/metrics.md): requests and handler
  // attempts of this runtime so far, queue depths and invocations of its database now (read on a
  // connection of the metrics' own). Any thread.
  std::string metrics_text();
  // The port metrics are served on (runtime_options::metrics_address) once started; 0 if none.
  int metrics_port() const { return metrics_port_; }

 private:
  // Opens a connection to the runtime's database, kept alive by `keep`.
  using connect_fn = std::function<database(std::shared_ptr<void>& keep)>;
  using any_setup_fn = std::function<std::vector<std::unique_ptr<endpoint>>(database)>;
  runtime(connect_fn connect, any_setup_fn setup, runtime_options opts);

  enum class role { both, handlers, publisher };
  void run_worker(role r);

  // Opens a worker's connection, kept alive by `keep`, and builds its endpoints on it.
  using worker_setup =
      std::function<std::vector<std::unique_ptr<endpoint>>(std::shared_ptr<void>&)>;

  worker_setup setup_;
  runtime_options opts_;
  std::shared_ptr<client_metrics> metrics_;
  std::shared_ptr<publish_claims> claims_;  // shared by every worker's endpoints
  int metrics_port_ = 0;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::exception_ptr setup_error_;
  int ready_ = 0;
  // notify() calls, handlers-only workers' turns that committed and publishers' turns that
  // queued messages for the handlers, for idle handlers' workers to wake on.
  std::uint64_t notified_ = 0;
  // notify() calls and handlers-only workers' turns that committed or threw, for publishers.
  std::uint64_t publish_wakes_ = 0;
};

}  // namespace exactly::client
