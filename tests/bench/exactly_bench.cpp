// exactly-bench: one business write made several ways on loopback, in one run, each scenario for a
// fixed time after a warm-up, at each concurrency, against a fresh bench-server process:
//   plain                   POST, no deduplication (the floor)
//   idempotency-key         POST with an Idempotency-Key, response stored in the same transaction
//   wire                    PUT, POST, GET, DELETE against the connector by a lean load generator
//   e2e                     the client runtime: handler, invoke_http, follow-up, DELETE (both
//                           sides durable)
//   outbox-idempotency-key  what one builds without the protocol, on the same runtime, queue and
//                           settings as e2e: the handler queues an outbox message in its
//                           transaction; outbox dispatchers (one per e2e worker) POST the due
//                           messages of a batch all at once after commit, with the message id as
//                           Idempotency-Key (retried with backoff on no answer or 5xx), then in
//                           one transaction record the answers and do the follow-ups' writes
//   outbox-three-exchanges  the same baseline making the protocol's two more exchanges per
//                           message, at no cost to the server: a GET answered 404 without a
//                           write before the batch's POSTs, and another sent with the next
//                           batch's POSTs, as the runtime sends a DELETE with them: what those
//                           exchanges alone cost the baseline. Where the cores are the limit (64
//                           clients), a ceiling for e2e, which makes them with writes and more
//                           commits besides; not necessarily at 1 client, where the dispatcher's
//                           polling adds latency that the runtime's publisher does not have
//   idempotency-key-four-exchanges
//                           the idempotency-key POST inside a wire cycle's other exchanges made
//                           to the connector route so that they write nothing: a PUT of an id
//                           the slot staged before (200), a GET of an id never staged (404), a
//                           DELETE of an id the slot deleted before (204): the cycle where only
//                           the POST writes
//   outbox-wire             the outbox baseline publishing the protocol's exchanges instead of
//                           its POST: a PUT of the body to the connector route, the POST, and
//                           the DELETE sent with the next batch's POSTs, under an id the handler
//                           chose: the e2e cycle at the baseline's client cost
// Prints a table and writes JSON: ops/s, p50/p99/p99.9, CPU seconds per op and peak RSS per
// process, and the ratios wire/idempotency-key, e2e/idempotency-key,
// outbox-idempotency-key/idempotency-key, e2e/outbox-idempotency-key, e2e/wire, the ceilings
// outbox-three-exchanges/outbox-idempotency-key and outbox-three-exchanges/wire, and
// idempotency-key-four-exchanges/idempotency-key, outbox-wire/wire and e2e/outbox-wire (the
// median of --rounds).
// --long-run N instead runs N wire cycles and samples RSS and database sizes. Figures only; no
// assertions.

#include "process_stats.hpp"
#include "slow_sync_vfs.hpp"

#include <child_process.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>
#include <pg_cluster.hpp>

#include "client/src/pg_text_array.hpp"
#include "client/src/queue_store.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/backoff.hpp>
#include <exactly/common/request_id.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace {

using namespace exactly;
using clock_type = std::chrono::steady_clock;
using nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::pair<std::string, std::string>> auth = {
    {"Authorization", "Bearer bench-key"}, {"Content-Type", "application/json"}};
const std::string body = R"({"customer_id":"c-1","amount_cents":1250})";

struct settings {
  double seconds = 5, warmup = 1;
  bool relaxed = false, ungrouped = false, reads_together = false, no_background_sync = false;
  int e2e_workers = 1;          // runtime worker threads carrying the e2e invocations
  int e2e_batch = 64;           // messages or steps a worker commits together
  int e2e_publishers = -1;      // e2e's runtime publisher threads; -1: as many as the dispatchers
  bool put_in_handler = false;  // e2e handlers wait for their PUTs (put_wait::in_handler)
  long fsync_delay_us = 0;      // a slow disk on both sides (slow_sync_vfs.hpp)
  std::string postgres;         // the server stores in this PostgreSQL schema; "" = SQLite
  std::string client_postgres;  // the e2e client's PostgreSQL schema; "" = SQLite
  int instances = 1;            // server processes sharing the database (PostgreSQL only)
  int connections = 1;          // PostgreSQL connections of each server process
};

struct figures {
  std::string scenario;
  int concurrency = 0;
  double ops_per_s = 0, p50_ms = 0, p99_ms = 0, p999_ms = 0;
  long ops = 0, errors = 0;
  long fewest_slot_ops = 0;  // the ops of the client that completed the fewest: 0 = one stalled
  double server_cpu_per_op_ms = 0, client_cpu_per_op_ms = 0;
  std::int64_t server_peak_rss_kib = 0, client_peak_rss_kib = 0;
  std::vector<std::pair<std::string, double>> step_ms{};  // wire: each request's mean latency
};

// The mean latency of each request of a wire cycle, over the measured time only.
struct step_clock {
  static constexpr const char* names[4] = {"PUT", "POST", "GET", "DELETE"};
  std::atomic<bool> on{false};
  std::atomic<std::int64_t> us[4]{}, count[4]{};
  void add(int step, clock_type::duration d) {
    if (!on.load(std::memory_order_relaxed))
      return;
    us[step] += std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    ++count[step];
  }
  std::vector<std::pair<std::string, double>> means() const {
    std::vector<std::pair<std::string, double>> m;
    for (int k = 0; k < 4; ++k) {
      if (count[k] > 0)
        m.emplace_back(names[k],
                       static_cast<double>(us[k]) / 1000.0 / static_cast<double>(count[k]));
    }
    return m;
  }
};

// A fresh bench-server in `dir`.
class server_process {
 public:
  server_process(const fs::path& dir, const settings& s, const std::vector<std::string>& extra = {})
      : proc_(args(dir, s, extra), "", true) {
    const std::string& line = proc_.first_line();
    port_ = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
  }
  ~server_process() { proc_.terminate(); }
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return proc_.pid(); }

 private:
  static std::vector<std::string> args(const fs::path& dir, const settings& s,
                                       const std::vector<std::string>& extra) {
    std::vector<std::string> a = {EXACTLY_BENCH_SERVER, "--db", (dir / "server.db").string()};
    if (!s.postgres.empty()) {
      a.insert(a.end(),
               {"--postgres", s.postgres, "--postgres-connections", std::to_string(s.connections)});
    }
    if (s.relaxed)
      a.push_back("--synchronous-normal");
    if (s.no_background_sync)
      a.push_back("--no-background-sync");
    if (s.ungrouped)
      a.push_back("--no-group-commit");
    if (s.reads_together)
      a.push_back("--no-separate-reads");
    if (s.fsync_delay_us > 0)
      a.insert(a.end(), {"--fsync-delay-us", std::to_string(s.fsync_delay_us)});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  test::child_process proc_;
  std::uint16_t port_ = 0;
};

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(sorted.size() * p))];
}

// Runs `op(slot)` in `concurrency` threads for the warm-up, then measures for `seconds`; the
// server figures add up the processes of `servers`.
template <class Op>
figures measure(const std::string& name, int concurrency, const settings& s,
                const std::vector<pid_t>& servers, Op op) {
  std::atomic<int> phase{0};  // 0 warm-up, 1 measuring, 2 stop
  std::vector<std::vector<double>> lat(concurrency);
  std::vector<long> errors(concurrency, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&, i] {
      auto slot = op.make_slot(i);
      for (int p; (p = phase.load(std::memory_order_relaxed)) < 2;) {
        const auto t = clock_type::now();
        const bool ok = op(slot);
        if (p == 1) {
          lat[i].push_back(
              std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
          errors[i] += ok ? 0 : 1;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(s.warmup));
  const auto server_cpu_seconds = [&] {
    double sum = 0;
    for (pid_t p : servers)
      sum += bench::cpu_seconds(p);
    return sum;
  };
  for (pid_t p : servers)
    bench::reset_peak_rss(p);
  bench::reset_peak_rss(getpid());
  const double server_cpu0 = server_cpu_seconds(), client_cpu0 = bench::cpu_seconds(getpid());
  const auto t0 = clock_type::now();
  phase = 1;
  if constexpr (requires { op.steps; })
    op.steps->on = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(s.seconds));
  phase = 2;
  if constexpr (requires { op.steps; })
    op.steps->on = false;
  const double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
  const double server_cpu = server_cpu_seconds() - server_cpu0;
  const double client_cpu = bench::cpu_seconds(getpid()) - client_cpu0;
  for (auto& t : threads)
    t.join();
  figures f{.scenario = name, .concurrency = concurrency};
  std::vector<double> all;
  for (int i = 0; i < concurrency; ++i) {
    all.insert(all.end(), lat[i].begin(), lat[i].end());
    f.errors += errors[i];
    const long slot_ops = static_cast<long>(lat[i].size());
    f.fewest_slot_ops = i == 0 ? slot_ops : std::min(f.fewest_slot_ops, slot_ops);
  }
  std::sort(all.begin(), all.end());
  f.ops = static_cast<long>(all.size());
  f.ops_per_s = static_cast<double>(f.ops) / elapsed;
  f.p50_ms = percentile(all, 0.5);
  f.p99_ms = percentile(all, 0.99);
  f.p999_ms = percentile(all, 0.999);
  if (f.ops > 0) {
    f.server_cpu_per_op_ms = 1000 * server_cpu / static_cast<double>(f.ops);
    f.client_cpu_per_op_ms = 1000 * client_cpu / static_cast<double>(f.ops);
  }
  for (pid_t p : servers)
    f.server_peak_rss_kib += bench::peak_rss_kib(p);
  f.client_peak_rss_kib = bench::peak_rss_kib(getpid());
  if constexpr (requires { op.steps; })
    f.step_ms = op.steps->means();
  return f;
}

// A load generator slot: a kept-alive connection. For idempotency-key-four-exchanges also an id
// staged with `body` and one deleted (a tombstone), whose PUT and DELETE write nothing again.
struct http_slot {
  test::http_client c;
  std::string staged, deleted;
  http_slot(std::uint16_t port, bool four_exchanges) : c(port) {
    if (!four_exchanges)
      return;
    staged = "/bench/write/" + request_id::mint().to_string();
    deleted = "/bench/write/" + request_id::mint().to_string();
    if (c.request("PUT", staged, body, auth).status != 201 ||
        c.request("PUT", deleted, body, auth).status != 201 ||
        c.request("DELETE", deleted, "", auth).status != 204)
      throw std::runtime_error("could not stage and delete a slot's ids");
  }
};

// Load generator slots: one each, spread over the server processes.
struct http_op {
  std::vector<std::uint16_t> ports;
  int kind;  // 0 plain, 1 idempotency-key, 2 wire, 3 idempotency-key-four-exchanges
  std::shared_ptr<step_clock> steps = std::make_shared<step_clock>();
  http_slot make_slot(int i) const {
    return http_slot(ports[static_cast<std::size_t>(i) % ports.size()], kind == 3);
  }
  bool operator()(http_slot& slot) const {
    test::http_client& c = slot.c;
    const std::string id = request_id::mint().to_string();
    if (kind == 0)
      return c.request("POST", "/plain/" + id, body, auth).status == 200;
    const auto idempotency_key_post = [&] {
      auto headers = auth;
      headers.emplace_back("Idempotency-Key", id);
      return c.request("POST", "/idem/write", body, headers).status == 201;
    };
    if (kind == 1)
      return idempotency_key_post();
    if (kind == 3) {
      // A wire cycle's exchanges through the connector, where only the POST writes: the PUT of
      // the slot's staged id is confirmed (200), the DELETE of its deleted id changes nothing
      // (204), the GET of a fresh id is answered 404.
      return c.request("PUT", slot.staged, body, auth).status == 200 && idempotency_key_post() &&
             c.request("GET", "/bench/write/" + id, "", auth).status == 404 &&
             c.request("DELETE", slot.deleted, "", auth).status == 204;
    }
    const std::string path = "/bench/write/" + id;
    const auto step = [&](int k, const std::string& request_body, unsigned expected) {
      const auto begun = clock_type::now();
      const bool ok = c.request(step_clock::names[k], path, request_body, auth).status == expected;
      steps->add(k, clock_type::now() - begun);
      return ok;
    };
    return step(0, body, 201) && step(1, "", 200) && step(2, "", 200) && step(3, "", 204);
  }
};

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
             e2e_way way = e2e_way::invoke_http)
      : path_((dir / "client.db").string()),
        db_opts_{.sync = s.relaxed ? sqlite::synchronous::normal : sqlite::synchronous::full},
        pg_opts_{s.client_postgres, !s.relaxed},
        done_(concurrency),
        dispatchers_(std::min(concurrency, s.e2e_workers)),
        batch_(s.e2e_batch),
        wait_for_put_(s.put_in_handler ? client::put_wait::in_handler
                                       : client::put_wait::before_commit) {
    {
      connection c = open();
      c.db().exec(on_postgres()
                      ? "CREATE TABLE IF NOT EXISTS done (seq BIGSERIAL PRIMARY KEY, slot BIGINT,"
                        " n BIGINT)"
                      : "CREATE TABLE IF NOT EXISTS done (slot INTEGER, n INTEGER)");
      c.db().exec(
          "CREATE TABLE IF NOT EXISTS answers (id TEXT PRIMARY KEY, status INTEGER, body TEXT)");
      client::queue_store q(c.db());  // creates the runtime's tables before the workers start
    }
    const std::string host = "127.0.0.1:" + std::to_string(port);
    transport_ = client::make_beast_transport(
        {.keys = {{host, "bench-key"}},
         .max_per_destination = static_cast<std::size_t>(concurrency)});
    const std::string url = "http://" + host + "/bench/write/{id}";
    auto setup = [this, url, way](database c) {
      std::vector<std::unique_ptr<client::endpoint>> eps;
      eps.push_back(std::make_unique<client::endpoint>(
          "billing", c,
          client::endpoint_options{.transport = transport_, .wait_for_put = wait_for_put_}));
      if (way == e2e_way::invoke_http) {
        eps[0]->on("bill", [url](client::handler_context& ctx) {
          ctx.invoke_http(url, body, "application/json",
                          {.type = "done", .body = ctx.incoming().body});
        });
        eps[0]->on("done", [](client::handler_context& ctx) { record_done(ctx); });
        return eps;
      }
      // The slot picks the dispatcher: one slot's messages always go to the same one.
      // outbox_wire: the interaction's id is chosen here, kept in the message for every retry.
      eps[0]->on("bill", [this, way](client::handler_context& ctx) {
        const std::int64_t slot = ctx.incoming().body.at("slot").get<std::int64_t>();
        json publish = ctx.incoming().body;
        if (way == e2e_way::outbox_wire)
          publish["rid"] = request_id::mint().to_string();
        ctx.send(outbox_queue(slot % dispatchers_), {.type = "publish", .body = publish});
      });
      return eps;
    };
    // The same threads either way: D handler workers, and D threads that publish (the runtime's
    // publishers, or the outbox's dispatchers).
    const client::runtime_options ro{.workers = dispatchers_,
                                     .idle_poll = std::chrono::milliseconds(1),
                                     .batch = s.e2e_batch,
                                     .publishers = way != e2e_way::invoke_http ? 0
                                                   : s.e2e_publishers < 0      ? dispatchers_
                                                                               : s.e2e_publishers};
    if (on_postgres())
      runtime_.emplace(
          pg_opts_, [setup](pg::connection& c) { return setup(c); }, ro);
    else
      runtime_.emplace(
          path_, db_opts_, [setup](sqlite::connection& c) { return setup(c); }, ro);
    runtime_->start();
    if (way != e2e_way::invoke_http) {
      for (int k = 0; k < dispatchers_; ++k)
        outbox_.emplace_back([this, k, way, host] { dispatch(k, way, host); });
    }
    poller_ = std::thread([this] { poll(); });
    injector_ = std::thread([this] { inject(); });
  }
  ~e2e_driver() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    arrived_.notify_all();
    injector_.join();
    poller_.join();
    for (auto& t : outbox_)
      t.join();
    runtime_->stop();
  }

  struct slot {
    int index;
    std::int64_t n = 0;
  };
  slot make_slot(int i) { return {i, 0}; }
  bool operator()(slot& s) {
    ++s.n;
    std::unique_lock lock(mutex_);
    arrivals_.emplace_back(s.index, s.n);
    arrived_.notify_one();
    return wake_.wait_for(lock, std::chrono::seconds(30), [&] {
      return done_[s.index] >= s.n || stop_;
    }) && done_[s.index] >= s.n;
  }

 private:
  // The follow-up's write in `db`: the n-th message of the slot in `m`'s body is done.
  static void record_done(const database& db, const client::message& m) {
    db.execute("INSERT INTO done(slot, n) VALUES (?, ?)", m.body.at("slot").get<std::int64_t>(),
               m.body.at("n").get<std::int64_t>());
  }
  static void record_done(client::handler_context& ctx) {
    record_done(ctx.database(), ctx.incoming());
  }

  // Dispatcher k's outbox queue: an endpoint name no runtime endpoint owns, so only it reads it.
  static std::string outbox_queue(std::int64_t k) { return "outbox." + std::to_string(k); }

  // Outbox dispatcher k, on a connection of its own, until stopped: reads up to batch_ due
  // messages of its queue, sends all their POSTs at once outside any transaction, then in one
  // flushed transaction records each stored answer, does its follow-up's write and consumes its
  // message; a message without an answer or with a 5xx is due again after a backoff, a refusal
  // goes to the error queue. Sleeps 0.5 ms when nothing is due; a storage error, or an exchange
  // not answered as expected, rolls the batch back and is printed.
  void dispatch(int k, e2e_way way, const std::string& host) {
    connection c = open();
    const database db = c.db();
    client::queue_store q(db);
    const std::string queue = outbox_queue(k);
    std::mt19937_64 rng(static_cast<std::uint64_t>(k));
    const dispatch_urls urls{"http://" + host + "/idem/write", "http://" + host + "/bench/write/"};
    std::vector<client::http_call> owed;  // sent with the next batch's POSTs
    while (!stop_) {
      try {
        if (dispatch_batch(db, q, queue, way, urls, owed, rng) > 0)
          continue;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "outbox dispatcher %d: %s\n", k, e.what());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  struct dispatch_urls {
    std::string idem;       // the idempotency-key route
    std::string connector;  // the connector route's prefix, an id to follow
  };

  // One batch of dispatch(): the number of messages it read. Per message, by `way`:
  //   outbox_idempotency_key  a POST with the message id as Idempotency-Key;
  //   outbox_three_exchanges  the same, and a GET of an id never staged before the POSTs (as the
  //                           runtime's PUTs go), another in `owed` (as its DELETEs go), each
  //                           answered 404 without a write;
  //   outbox_wire             a PUT of the body to the connector route before the POSTs, the
  //                           POST, and its DELETE in `owed`, all under the id the handler chose.
  std::size_t dispatch_batch(const database& db, client::queue_store& q, const std::string& queue,
                             e2e_way way, const dispatch_urls& urls,
                             std::vector<client::http_call>& owed, std::mt19937_64& rng) {
    const std::int64_t now = system_now_ms();
    const std::vector<client::queued_message> due = q.due(queue, now, batch_);
    if (due.empty())
      return 0;
    const auto never_staged = [&urls] {
      return client::http_call{"GET", urls.connector + request_id::mint().to_string(), "", "", {}};
    };
    const auto wire_url = [&urls](const client::queued_message& m) {
      return urls.connector + m.msg.body.at("rid").get<std::string>();
    };
    const auto expect = [](const client::http_call& c, const client::http_result& r,
                           std::initializer_list<unsigned> statuses) {
      if (r.transport_failed ||
          std::find(statuses.begin(), statuses.end(), r.status) == statuses.end())
        throw std::runtime_error(c.method + " " + c.url + " got " +
                                 (r.transport_failed ? r.error : std::to_string(r.status)));
    };
    std::vector<client::http_call> before;
    for (const client::queued_message& m : due) {
      if (way == e2e_way::outbox_three_exchanges)
        before.push_back(never_staged());
      else if (way == e2e_way::outbox_wire)
        before.push_back({"PUT", wire_url(m), "application/json", body, {}});
    }
    const std::vector<client::http_result> put_answers = transport_->send_all(before);
    for (std::size_t i = 0; i < before.size(); ++i) {
      if (way == e2e_way::outbox_wire)
        expect(before[i], put_answers[i], {201, 200});  // 200: staged by an earlier attempt
      else
        expect(before[i], put_answers[i], {404});
    }
    std::vector<client::http_call> calls;
    for (const client::queued_message& m : due) {
      if (way == e2e_way::outbox_wire)
        calls.push_back({"POST", wire_url(m), "", "", {}});
      else
        calls.push_back(
            {"POST", urls.idem, "application/json", body, {{"Idempotency-Key", m.msg.id}}});
    }
    for (client::http_call& c : std::exchange(owed, {}))
      calls.push_back(std::move(c));
    std::vector<client::http_result> answers = transport_->send_all(calls);
    for (std::size_t i = due.size(); i < answers.size(); ++i)
      expect(calls[i], answers[i], {calls[i].method == "DELETE" ? 204u : 404u});
    answers.resize(due.size());
    std::vector<client::http_call> next;  // owed once this batch has committed
    database_transaction tx(db);
    for (std::size_t i = 0; i < due.size(); ++i) {
      const client::http_result& r = answers[i];
      const client::queued_message& m = due[i];
      if (!r.transport_failed && r.status >= 200 && r.status < 300) {
        db.execute("INSERT INTO answers(id, status, body) VALUES (?, ?, ?)", m.msg.id,
                   static_cast<std::int64_t>(r.status), r.body);
        record_done(db, m.msg);
        q.consume(m.seq);
        if (way == e2e_way::outbox_three_exchanges)
          next.push_back(never_staged());
        else if (way == e2e_way::outbox_wire)
          next.push_back({"DELETE", wire_url(m), "", "", {}});
        continue;
      }
      const std::string error =
          r.transport_failed ? "no answer: " + r.error : "status " + std::to_string(r.status);
      if (r.transport_failed || r.status >= 500)
        q.retry_later(m.seq, now + backoff_policy{}.delay(m.attempts, rng).count(), error);
      else
        q.move_to_errors(m.seq, error, now);
    }
    tx.commit();
    owed = std::move(next);
    return due.size();
  }

  // Messages arrive in groups too: whatever slots queued meanwhile is enqueued in one commit.
  void inject() {
    connection c = open();
    client::queue_store q(c.db());
    for (;;) {
      std::vector<std::pair<int, std::int64_t>> batch;
      {
        std::unique_lock lock(mutex_);
        arrived_.wait(lock, [&] { return !arrivals_.empty() || stop_; });
        if (stop_)
          return;
        batch.swap(arrivals_);
      }
      // A storage failure (the write lock not had within the busy timeout) is printed, and the
      // batch is enqueued again, so a stall shows as a line and a tail, not as a lost slot.
      for (;;) {
        try {
          database_transaction tx(c.db());
          for (const auto& [index, n] : batch) {
            q.enqueue("billing",
                      {.id = std::to_string(index) + "/" + std::to_string(n),
                       .type = "bill",
                       .body = {{"slot", index}, {"n", n}}},
                      system_now_ms());
          }
          tx.commit();
          break;
        } catch (const storage_error& e) {
          std::fprintf(stderr, "e2e injector: %s (enqueued again)\n", e.what());
        }
      }
      runtime_->notify();
    }
  }

  // Reads the follow-ups' writes as they commit and wakes the slots they finish. On PostgreSQL
  // rows commit out of their seq order (several workers' transactions), so a seq skipped over is
  // looked for again until it shows up or is older than any slot waits (a rolled-back write).
  void poll() {
    connection c = open();
    std::int64_t last = 0;
    std::map<std::int64_t, clock_type::time_point> skipped;  // seqs below `last` not seen yet
    if (on_postgres())  // nothing is injected yet: every row there is an earlier run's
      last = c.pg->query_int64("SELECT coalesce(max(seq), 0) FROM done").value_or(0);
    while (!stop_) {
      bool any = false;
      const auto arrived = [&](std::int64_t seq, std::int64_t slot, std::int64_t n) {
        std::lock_guard lock(mutex_);
        if (!skipped.erase(seq)) {
          for (std::int64_t gap = last + 1; gap < seq; ++gap)
            skipped.emplace(gap, clock_type::now());
          last = std::max(last, seq);
        }
        auto& d = done_[static_cast<std::size_t>(slot)];
        d = std::max(d, n);
        any = true;
      };
      if (on_postgres()) {
        std::erase_if(skipped, [](const auto& gap) {
          return clock_type::now() - gap.second > std::chrono::seconds(40);
        });
        std::vector<std::string> gaps;
        for (const auto& gap : skipped)
          gaps.push_back(std::to_string(gap.first));
        const pg::result r = c.pg->query(
            "SELECT seq, slot, n FROM done WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq",
            last, client::pg_text_array(gaps));
        for (int i = 0; i < r.rows(); ++i)
          arrived(r.int64(i, 0), r.int64(i, 1), r.int64(i, 2));
      } else {
        auto& q =
            c.sqlite->prepare("SELECT rowid, slot, n FROM done WHERE rowid > ? ORDER BY rowid");
        q.bind(1, last);
        while (q.step())
          arrived(q.int64(0), q.int64(1), q.int64(2));
        q.reset();
      }
      if (any)
        wake_.notify_all();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    wake_.notify_all();
  }

  // A connection of its own to the client's database, either engine.
  struct connection {
    std::unique_ptr<sqlite::connection> sqlite;
    std::unique_ptr<pg::connection> pg;
    database db() const { return sqlite ? database(*sqlite) : database(*pg); }
  };
  bool on_postgres() const { return !pg_opts_.conninfo.empty(); }
  connection open() const {
    connection c;
    if (on_postgres())
      c.pg = std::make_unique<pg::connection>(pg_opts_);
    else
      c.sqlite = std::make_unique<sqlite::connection>(path_, db_opts_);
    return c;
  }

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
  std::atomic<bool> stop_{false};
  std::thread poller_, injector_;
  std::vector<std::thread> outbox_;
};

// e2e_driver is not copyable; measure() copies nothing but calls through this reference.
struct e2e_op {
  e2e_driver* d;
  e2e_driver::slot make_slot(int i) const { return d->make_slot(i); }
  bool operator()(e2e_driver::slot& s) const { return (*d)(s); }
};

json to_json(const figures& f) {
  json steps = json::object();
  for (const auto& [verb, ms] : f.step_ms)
    steps[verb] = ms;
  return {{"scenario", f.scenario},
          {"concurrency", f.concurrency},
          {"ops_per_s", f.ops_per_s},
          {"ops", f.ops},
          {"errors", f.errors},
          {"fewest_slot_ops", f.fewest_slot_ops},
          {"p50_ms", f.p50_ms},
          {"p99_ms", f.p99_ms},
          {"p999_ms", f.p999_ms},
          {"server_cpu_ms_per_op", f.server_cpu_per_op_ms},
          {"client_cpu_ms_per_op", f.client_cpu_per_op_ms},
          {"server_peak_rss_kib", f.server_peak_rss_kib},
          {"client_peak_rss_kib", f.client_peak_rss_kib},
          {"mean_ms_per_request", steps}};
}

std::int64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

// N wire cycles at `concurrency`, sampling every `every` seconds; flat means the last tenth's
// mean is within 10 % of the first tenth's. Tombstones are kept for an acceptance window of 2 s
// (swept every second) and the business write overwrites a bounded set of rows, so steady state
// comes within seconds.
// `rate` cycles per second at most (0: as fast as the clients go); a fixed rate keeps the window
// of tombstones the same size all along, so the files can only grow by what is left behind.
json long_run(long n, int concurrency, double every, double rate, const settings& s) {
  test::temp_dir dir;
  server_process server(
      dir.path(), s,
      {"--acceptance-window-seconds", "2", "--sweep-seconds", "1", "--bounded-writes"});
  const http_op op{{server.port()}, 2};
  std::atomic<long> started{0}, finished{0}, errors{0};
  std::vector<std::thread> threads;
  const auto t0 = clock_type::now();
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&] {
      auto c = op.make_slot(0);
      for (long k; (k = started.fetch_add(1)) < n;) {
        if (rate > 0) {
          std::this_thread::sleep_until(
              t0 + std::chrono::duration_cast<clock_type::duration>(
                       std::chrono::duration<double>(static_cast<double>(k) / rate)));
        }
        if (!op(c))
          ++errors;
        ++finished;
      }
    });
  }
  json samples = json::array();
  const fs::path db = dir.path() / "server.db";
  // The server's rows, counted through a reader of the same file (WAL: it never blocks a write).
  sqlite::connection rows(db.string(), {.busy_timeout = std::chrono::milliseconds(1000)});
  std::printf("%8s %10s %12s %12s %14s %14s %12s\n", "seconds", "cycles", "server KiB",
              "client KiB", "server db B", "server WAL B", "server rows");
  for (bool last = false; !last;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(every));
    last = finished.load() >= n;
    json sample = {{"seconds", std::chrono::duration<double>(clock_type::now() - t0).count()},
                   {"cycles", finished.load()},
                   {"server_rss_kib", bench::rss_kib(server.pid())},
                   {"client_rss_kib", bench::rss_kib(getpid())},
                   {"server_db_file_bytes", file_bytes(db)},
                   {"server_wal_bytes", file_bytes(db.string() + "-wal")},
                   {"server_rows",
                    rows.query_int64("SELECT count(*) FROM exactly_interactions").value_or(-1)}};
    sample["server_db_bytes"] = sample["server_db_file_bytes"].get<std::int64_t>() +
                                sample["server_wal_bytes"].get<std::int64_t>();
    std::printf("%8.0f %10ld %12lld %12lld %14lld %14lld %12lld\n", sample["seconds"].get<double>(),
                sample["cycles"].get<long>(),
                static_cast<long long>(sample["server_rss_kib"].get<std::int64_t>()),
                static_cast<long long>(sample["client_rss_kib"].get<std::int64_t>()),
                static_cast<long long>(sample["server_db_file_bytes"].get<std::int64_t>()),
                static_cast<long long>(sample["server_wal_bytes"].get<std::int64_t>()),
                static_cast<long long>(sample["server_rows"].get<std::int64_t>()));
    std::fflush(stdout);
    samples.push_back(sample);
  }
  for (auto& t : threads)
    t.join();
  json out = {{"cycles", n}, {"rate", rate}, {"errors", errors.load()}, {"samples", samples}};
  std::printf("%ld cycles, %ld errors\n", n, errors.load());
  const std::size_t tenth = std::max<std::size_t>(1, samples.size() / 10);
  for (const char* key : {"server_rss_kib", "client_rss_kib", "server_db_bytes", "server_rows"}) {
    double first = 0, last = 0;
    for (std::size_t i = 0; i < tenth; ++i) {
      first += samples[i][key].get<double>();
      last += samples[samples.size() - 1 - i][key].get<double>();
    }
    const double growth = first > 0 ? last / first - 1 : 0;
    out["growth"][key] = growth;
    std::printf("%s: first tenth %.0f, last tenth %.0f, growth %+.1f %% (target within 10 %%)\n",
                key, first / static_cast<double>(tenth), last / static_cast<double>(tenth),
                100 * growth);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "exactly-bench: plain, idempotency-key, wire, e2e, the outbox baselines and the protocol's "
      "exchanges at a baseline's cost, on loopback, in one run"};
  settings s;
  std::vector<int> concurrency = {1, 64};
  const std::vector<std::string> known = {"plain",
                                          "idempotency-key",
                                          "wire",
                                          "e2e",
                                          "outbox-idempotency-key",
                                          "outbox-three-exchanges",
                                          "idempotency-key-four-exchanges",
                                          "outbox-wire"};
  std::vector<std::string> scenarios = known;
  std::string json_path = "bench-results.json";
  long long_run_cycles = 0;
  double sample_seconds = 10;
  int rounds = 1;
  app.add_option("--seconds", s.seconds, "measured time of each scenario");
  std::string engine = "sqlite";
  app.add_option("--engine", engine,
                 "storage of the server and of the e2e client: sqlite, or postgres (a throwaway "
                 "cluster started here, a schema for each)");
  app.add_option("--server-instances", s.instances,
                 "server processes sharing the PostgreSQL database; clients spread over them")
      ->check(CLI::Range(1, 8));
  app.add_option("--server-connections", s.connections,
                 "PostgreSQL connections of each server process, one storage thread each")
      ->check(CLI::Range(1, 16));
  app.add_option("--warmup", s.warmup, "unmeasured time before each scenario");
  app.add_option("--concurrency", concurrency, "concurrent clients, one run per value")
      ->delimiter(',');
  app.add_option("--scenarios", scenarios,
                 "which of plain, idempotency-key, wire, e2e, outbox-idempotency-key, "
                 "outbox-three-exchanges, idempotency-key-four-exchanges, outbox-wire")
      ->delimiter(',')
      ->check(CLI::IsMember(known));
  app.add_option("--json", json_path, "where to write the figures");
  app.add_flag("--synchronous-normal", s.relaxed, "opt out of synchronous=FULL everywhere");
  app.add_flag("--no-group-commit", s.ungrouped, "one COMMIT per request on the server");
  app.add_flag("--no-background-sync", s.no_background_sync,
               "the server's storage thread waits for each flushed group's fsync");
  app.add_flag("--no-separate-reads", s.reads_together,
               "server GETs on the storage thread, in commit groups");
  app.add_option("--e2e-workers", s.e2e_workers,
                 "client runtime worker threads for e2e and the outbox scenarios (at most the "
                 "concurrency)");
  app.add_option("--e2e-publishers", s.e2e_publishers,
                 "e2e: runtime threads that only publish beside the handler workers (0: the "
                 "workers publish too; default: as many as the outbox baseline's dispatchers)");
  app.add_option("--e2e-batch", s.e2e_batch,
                 "client runtime batch (e2e and the outbox scenarios): steps sharing one commit");
  app.add_flag(
      "--e2e-put-in-handler", s.put_in_handler,
      "e2e handlers wait for their PUT's answer, one after another (put_wait::in_handler)");
  app.add_option("--fsync-delay-us", s.fsync_delay_us,
                 "a slow disk: every SQLite fsync of the server and the client takes this much "
                 "longer")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rounds", rounds,
                 "run every scenario this many times, interleaved; ratios are the median round's")
      ->check(CLI::PositiveNumber);
  app.add_option("--long-run", long_run_cycles, "instead: N wire cycles, sampling memory/disk");
  double long_run_rate = 0;
  app.add_option("--long-run-rate", long_run_rate,
                 "long run: start at most this many cycles per second (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sample-seconds", sample_seconds, "long run: sampling period");
  CLI11_PARSE(app, argc, argv);
  if (s.fsync_delay_us > 0)
    bench::install_slow_sync_vfs(std::chrono::microseconds(s.fsync_delay_us));
  if (engine != "sqlite" && engine != "postgres") {
    std::fprintf(stderr, "--engine must be sqlite or postgres\n");
    return 2;
  }
  if ((s.instances > 1 || s.connections > 1) && engine != "postgres") {
    std::fprintf(stderr,
                 "--server-instances and --server-connections above 1 need --engine postgres\n");
    return 2;
  }
  // PostgreSQL: a throwaway cluster for the run (fsync=on, synchronous_commit=on), a fresh schema
  // per scenario.
  std::optional<test::pg_cluster> cluster;
  if (engine == "postgres")
    cluster.emplace();

  json out = {{"machine", {{"cores", std::thread::hardware_concurrency()}}},
              {"synchronous", s.relaxed ? "NORMAL" : "FULL"},
              {"group_commit", !s.ungrouped},
              {"background_sync", !s.no_background_sync},
              {"separate_reads", !s.reads_together},
              {"e2e_workers", s.e2e_workers},
              {"e2e_batch", s.e2e_batch},
              {"e2e_publishers", s.e2e_publishers},
              {"e2e_put_wait", s.put_in_handler ? "in_handler" : "before_commit"},
              {"fsync_delay_us", s.fsync_delay_us},
              {"engine", engine},
              {"server_instances", s.instances},
              {"server_connections", s.connections}};
  if (long_run_cycles > 0) {
    out["long_run"] =
        long_run(long_run_cycles, concurrency.back(), sample_seconds, long_run_rate, s);
    std::ofstream(json_path) << out.dump(2) << '\n';
    std::printf("figures written to %s\n", json_path.c_str());
    return 0;
  }
  std::printf(
      "server engine %s (%d instance%s, %d connection%s each), synchronous=%s on every database,"
      " group commit %s, background sync %s, %u cores; %g s warm-up, %g s measured per scenario\n",
      engine.c_str(), s.instances, s.instances > 1 ? "s" : "", s.connections,
      s.connections > 1 ? "s" : "", s.relaxed ? "NORMAL" : "FULL", s.ungrouped ? "off" : "on",
      s.no_background_sync ? "off" : "on", std::thread::hardware_concurrency(), s.warmup,
      s.seconds);
  if (s.fsync_delay_us > 0)
    std::printf("every fsync of server and client takes %ld us longer (--fsync-delay-us)\n",
                s.fsync_delay_us);
  std::printf("%-30s %5s %9s %8s %8s %8s %6s %10s %10s %10s %10s\n", "scenario", "conc", "ops/s",
              "p50 ms", "p99 ms", "p99.9 ms", "errors", "srv cpu/op", "cli cpu/op", "srv peak",
              "cli peak");
  std::vector<figures> all;
  std::vector<int> round_of;  // all[i] was measured in round round_of[i]
  for (int round = 0; round < rounds; ++round) {
    for (int c : concurrency) {
      for (const std::string& name : scenarios) {
        test::temp_dir dir;
        if (cluster) {
          s.postgres = cluster->fresh_schema();
          s.client_postgres = cluster->fresh_schema();
        }
        std::vector<std::unique_ptr<server_process>> servers;
        std::vector<pid_t> pids;
        std::vector<std::uint16_t> ports;
        for (int i = 0; i < s.instances; ++i) {
          servers.push_back(std::make_unique<server_process>(dir.path(), s));
          pids.push_back(servers.back()->pid());
          ports.push_back(servers.back()->port());
        }
        figures f;
        if (name == "e2e" || name.starts_with("outbox-")) {
          e2e_driver driver(dir.path(), ports[0], c, s,
                            name == "e2e"                      ? e2e_way::invoke_http
                            : name == "outbox-idempotency-key" ? e2e_way::outbox_idempotency_key
                            : name == "outbox-wire"            ? e2e_way::outbox_wire
                                                               : e2e_way::outbox_three_exchanges);
          f = measure(name, c, s, pids, e2e_op{&driver});
        } else {
          const int kind = name == "plain"                            ? 0
                           : name == "idempotency-key"                ? 1
                           : name == "idempotency-key-four-exchanges" ? 3
                                                                      : 2;
          f = measure(name, c, s, pids, http_op{ports, kind});
        }
        std::printf("%-30s %5d %9.0f %8.2f %8.2f %8.2f %6ld %8.3fms %8.3fms %7lldMiB %7lldMiB\n",
                    name.c_str(), c, f.ops_per_s, f.p50_ms, f.p99_ms, f.p999_ms, f.errors,
                    f.server_cpu_per_op_ms, f.client_cpu_per_op_ms,
                    static_cast<long long>(f.server_peak_rss_kib / 1024),
                    static_cast<long long>(f.client_peak_rss_kib / 1024));
        if (!f.step_ms.empty()) {
          std::printf("%-30s", "  mean ms per request:");
          for (const auto& [verb, ms] : f.step_ms)
            std::printf(" %s %.2f", verb.c_str(), ms);
          std::printf("\n");
        }
        std::fflush(stdout);
        all.push_back(f);
        round_of.push_back(round);
        json row = to_json(f);
        row["round"] = round + 1;
        out["results"].push_back(row);
      }
    }
  }
  // Each ratio divides figures of one round (the same minutes of a noisy machine); with several
  // rounds the median is reported, with the spread.
  for (int c : concurrency) {
    auto find = [&](const std::string& name, int round) -> const figures* {
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].scenario == name && all[i].concurrency == c && round_of[i] == round)
          return &all[i];
      }
      return nullptr;
    };
    const std::pair<const char*, const char*> quotients[] = {
        {"wire", "idempotency-key"},
        {"e2e", "idempotency-key"},
        {"outbox-idempotency-key", "idempotency-key"},
        {"e2e", "outbox-idempotency-key"},
        {"e2e", "wire"},
        {"outbox-three-exchanges", "outbox-idempotency-key"},
        {"outbox-three-exchanges", "wire"},
        {"idempotency-key-four-exchanges", "idempotency-key"},
        {"outbox-wire", "wire"},
        {"e2e", "outbox-wire"}};
    for (const auto& [name, base] : quotients) {
      std::vector<double> ratios;
      for (int round = 0; round < rounds; ++round) {
        const figures* b = find(base, round);
        const figures* f = find(name, round);
        if (b && f && b->ops_per_s > 0)
          ratios.push_back(f->ops_per_s / b->ops_per_s);
      }
      if (ratios.empty())
        continue;
      const std::string key = std::string(name) + "/" + base;
      out["ratio_rounds"][key][std::to_string(c)] = ratios;
      std::sort(ratios.begin(), ratios.end());
      const double median = ratios[ratios.size() / 2];
      out["ratios"][key][std::to_string(c)] = median;
      std::printf("concurrency %d: %s = %.3f", c, key.c_str(), median);
      if (ratios.size() > 1)
        std::printf(" (median of %zu rounds, %.3f to %.3f)", ratios.size(), ratios.front(),
                    ratios.back());
      std::printf("\n");
    }
  }
  std::ofstream(json_path) << out.dump(2) << '\n';
  std::printf("figures written to %s\n", json_path.c_str());
  return 0;
}
