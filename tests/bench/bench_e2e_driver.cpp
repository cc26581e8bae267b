// exactly-bench's e2e driver (bench_e2e_driver.hpp): the runtime and its handlers, the injector
// that queues the slots' messages, the poller that sees their follow-ups commit.
#include "bench_e2e_driver.hpp"

#include "timed_transport.hpp"

#include "client/src/pg_text_array.hpp"
#include "client/src/queue_store.hpp"

#include <exactly/common/clock.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite_wal_pages.hpp>
#include <exactly/common/storage_error.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>

namespace exactly::bench {

using nlohmann::json;

e2e_driver::e2e_driver(const fs::path& dir, std::uint16_t port, int concurrency, const settings& s,
                       e2e_way way)
    : path_((dir / "client.db").string()),
      db_opts_{sqlite::with_wal_pages(
          {.sync = s.relaxed ? sqlite::synchronous::normal : sqlite::synchronous::full},
          s.wal_pages)},
      pg_opts_{s.client_postgres, !s.relaxed},
      done_(concurrency),
      dispatchers_(std::min(concurrency, s.e2e_workers)),
      batch_(s.e2e_batch),
      wait_for_put_(s.put_in_handler ? client::put_wait::in_handler
                    : s.put_never    ? client::put_wait::never
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
  requests_ =
      std::make_shared<step_clock>("client_mean_ms_per_request", "client's mean ms per request",
                                   request_methods, "", "client_requests_per_op");
  transport_ = std::make_shared<timed_transport>(
      client::make_beast_transport({.keys = {{host, bench_api_key(0)}},
                                    .max_per_destination = static_cast<std::size_t>(concurrency)}),
      requests_);
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
    batches_ = std::make_shared<step_clock>(
        "mean_ms_per_dispatcher_batch", "mean ms a dispatcher batch",
        std::vector<std::string>{"read", way == e2e_way::outbox_wire ? "PUTs" : "GETs", "POSTs",
                                 "writes", "COMMIT"},
        "messages_per_dispatcher_batch");
    for (int k = 0; k < dispatchers_; ++k)
      outbox_.emplace_back([this, k, way, host] { dispatch(k, way, host); });
  }
  poller_ = std::thread([this] { poll(); });
  injector_ = std::thread([this] { inject(); });
}

e2e_driver::~e2e_driver() {
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

std::vector<std::shared_ptr<step_clock>> e2e_driver::clocks() const {
  if (batches_)
    return {requests_, batches_};
  return {requests_};
}

bool e2e_driver::operator()(slot& s) {
  ++s.n;
  std::unique_lock lock(mutex_);
  arrivals_.emplace_back(s.index, s.n);
  arrived_.notify_one();
  return wake_.wait_for(lock, std::chrono::seconds(30), [&] {
    return done_[s.index] >= s.n || stop_;
  }) && done_[s.index] >= s.n;
}

void e2e_driver::record_done(const database& db, const client::message& m) {
  db.execute("INSERT INTO done(slot, n) VALUES (?, ?)", m.body.at("slot").get<std::int64_t>(),
             m.body.at("n").get<std::int64_t>());
}

void e2e_driver::record_done(client::handler_context& ctx) {
  record_done(ctx.database(), ctx.incoming());
}

void e2e_driver::inject() {
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

void e2e_driver::poll() {
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
      auto& q = c.sqlite->prepare("SELECT rowid, slot, n FROM done WHERE rowid > ? ORDER BY rowid");
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

e2e_driver::connection e2e_driver::open() const {
  connection c;
  if (on_postgres())
    c.pg = std::make_unique<pg::connection>(pg_opts_);
  else
    c.sqlite = std::make_unique<sqlite::connection>(path_, db_opts_);
  return c;
}

}  // namespace exactly::bench
