#pragma once
// exactly-bench's e2e and outbox scenarios: the client runtime, closed loop, against the server.

#include "bench_types.hpp"
#include "step_clock.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/http_transport.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace exactly::client {
class queue_store;
}

namespace exactly::bench {

namespace fs = std::filesystem;

// How the e2e driver's "bill" handler makes the write.
enum class e2e_way {
  invoke_http,  // the protocol: invoke_http to the connector route, a "done" follow-up
  // The baseline, a transactional outbox: ctx.send to an outbox queue of the same database that
  // no runtime endpoint owns; the driver's dispatchers publish it (e2e_driver::dispatch).
  outbox_idempotency_key,
  // The same outbox, and per message two more exchanges that write nothing (dispatch_batch).
  outbox_three_exchanges,
  // The same outbox publishing the protocol's exchanges to the connector route instead: a PUT,
  // then a POST, and a DELETE sent with the next batch's POSTs (dispatch_batch).
  outbox_wire,
};

// The client runtime, closed loop: each slot queues a message (through an injector thread that
// enqueues what arrived meanwhile in one commit) whose handler invokes the route (`way`; for the
// outbox, through the driver's dispatcher threads), and waits until its follow-up has committed
// (seen by a poller of the `done` table). The client's database is SQLite, or PostgreSQL with
// settings::client_postgres.
class e2e_driver {
 public:
  e2e_driver(const fs::path& dir, std::uint16_t port, int concurrency, const settings& s,
             e2e_way way = e2e_way::invoke_http);
  ~e2e_driver();

  struct slot {
    int index;
    std::int64_t n = 0;
  };
  slot make_slot(int i) { return {i, 0}; }
  // Queues the slot's next message and waits, 30 s at most, until its follow-up has committed.
  bool operator()(slot& s);
  // The mean time of the client's exchanges by method, and for the outbox ways the steps of the
  // dispatchers' batches: the read of the due messages, the exchanges before the POSTs (PUTs or
  // GETs), the POSTs (with the DELETEs or GETs owed), the answers' and follow-ups' writes, the
  // COMMIT, and the batch's messages.
  std::vector<std::shared_ptr<step_clock>> clocks() const;

 private:
  struct dispatch_urls {
    std::string idem;       // the idempotency-key route
    std::string connector;  // the connector route's prefix, an id to follow
  };
  // A connection of its own to the client's database, either engine.
  struct connection {
    std::unique_ptr<sqlite::connection> sqlite;
    std::unique_ptr<pg::connection> pg;
    database db() const { return sqlite ? database(*sqlite) : database(*pg); }
  };

  // The follow-up's write in `db`: the n-th message of the slot in `m`'s body is done.
  static void record_done(const database& db, const client::message& m);
  static void record_done(client::handler_context& ctx);

  // Dispatcher k's outbox queue: an endpoint name no runtime endpoint owns, so only it reads it.
  static std::string outbox_queue(std::int64_t k) { return "outbox." + std::to_string(k); }

  // Outbox dispatcher k, on a connection of its own, until stopped: reads up to batch_ due
  // messages of its queue, sends all their POSTs at once outside any transaction, then in one
  // flushed transaction records each stored answer, does its follow-up's write and consumes its
  // message; a message without an answer or with a 5xx is due again after a backoff, a refusal
  // goes to the error queue. Sleeps 0.5 ms when nothing is due; a storage error, or an exchange
  // not answered as expected, rolls the batch back and is printed.
  void dispatch(int k, e2e_way way, const std::string& host);

  // One batch of dispatch(): the number of messages it read. Per message, by `way`:
  //   outbox_idempotency_key  a POST with the message id as Idempotency-Key;
  //   outbox_three_exchanges  the same, and a GET of an id never staged before the POSTs (as the
  //                           runtime's PUTs go), another in `owed` (as its DELETEs go), each
  //                           answered 404 without a write;
  //   outbox_wire             a PUT of the body to the connector route before the POSTs, the
  //                           POST, and its DELETE in `owed`, all under the id the handler chose.
  std::size_t dispatch_batch(const database& db, client::queue_store& q, const std::string& queue,
                             e2e_way way, const dispatch_urls& urls,
                             std::vector<client::http_call>& owed, std::mt19937_64& rng);

  // Messages arrive in groups too: whatever slots queued meanwhile is enqueued in one commit.
  void inject();

  // Reads the follow-ups' writes as they commit and wakes the slots they finish. On PostgreSQL
  // rows commit out of their seq order (several workers' transactions), so a seq skipped over is
  // looked for again until it shows up or is older than any slot waits (a rolled-back write).
  void poll();

  bool on_postgres() const { return !pg_opts_.conninfo.empty(); }
  connection open() const;

  std::string path_;
  sqlite::options db_opts_;
  pg::options pg_opts_;
  std::shared_ptr<client::http_transport> transport_;
  std::optional<client::runtime> runtime_;
  std::mutex mutex_;
  std::condition_variable wake_, arrived_;
  std::vector<std::pair<int, std::int64_t>> arrivals_;
  std::vector<std::int64_t> done_;
  int dispatchers_;  // runtime workers, and the outbox ways' dispatchers
  int batch_;        // messages a worker or dispatcher commits together
  client::put_wait wait_for_put_;
  std::shared_ptr<step_clock> requests_;
  std::shared_ptr<step_clock> batches_;  // the outbox ways only
  std::atomic<bool> stop_{false};
  std::thread poller_, injector_;
  std::vector<std::thread> outbox_;
};

// e2e_driver is not copyable; measure() copies nothing but calls through this reference.
struct e2e_op {
  e2e_driver* d;
  std::vector<std::shared_ptr<step_clock>> steps = d->clocks();
  e2e_driver::slot make_slot(int i) const { return d->make_slot(i); }
  bool operator()(e2e_driver::slot& s) const { return (*d)(s); }
};

}  // namespace exactly::bench
