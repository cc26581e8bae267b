// The runtime's worker threads on each engine: idle workers wake on notify() instead of waiting
// out idle_poll; its metrics count handler attempts and read the database's gauges.
#include "client_contracts.hpp"

#include <metrics_text.hpp>

#include <exactly/client/runtime.hpp>

#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

TEST_P(runtime_contract, notify_wakes_an_idle_worker_before_its_idle_poll) {
  exec_sql(db(), "CREATE TABLE pings (n BIGINT)");
  client::endpoint outside("pinger", db(), {});
  auto rt = tdb().make_runtime(
      [](database wdb) {
        endpoints eps;
        eps.push_back(
            std::make_unique<client::endpoint>("pinger", wdb, client::endpoint_options{}));
        eps[0]->on("ping", [](client::handler_context& ctx) {
          run_sql(ctx.database(), "INSERT INTO pings VALUES (1)");
        });
        return eps;
      },
      {.workers = 1, .idle_poll = std::chrono::seconds(30)});
  rt->start();
  auto pings = [&] { return query_int(db(), "SELECT count(*) FROM pings"); };
  auto handled_within = [&](std::int64_t n, auto limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (pings() < n && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return pings() >= n;
  };
  // A first ping, noticed, proves the worker runs; after it the worker finds nothing and idles.
  outside.send("pinger", {.type = "ping"});
  rt->notify();
  ASSERT_TRUE(handled_within(1, std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  outside.send("pinger", {.type = "ping"});
  EXPECT_FALSE(handled_within(2, std::chrono::milliseconds(300)))
      << "without notify() the worker waits out its idle poll";
  rt->notify();
  EXPECT_TRUE(handled_within(2, std::chrono::seconds(10)));
  rt->stop();
}

// With publishers of their own, the handlers' workers wake each other when one committed: the
// messages its handlers sent are shared out at once instead of after the others' idle poll.
// PostgreSQL only: there each worker claims messages the other has not locked, while SQLite's
// workers race for its one write lock, so which of them runs a message is chance.
TEST_P(runtime_contract, a_handlers_worker_that_committed_wakes_the_others) {
  if (db().kind() != engine::postgres)
    GTEST_SKIP() << "which worker runs a message is chance on SQLite";
  client::endpoint outside("fan", db(), {});
  std::mutex m;
  std::set<std::thread::id> ran_slow;  // the workers that ran a "slow" message
  auto rt = tdb().make_runtime(
      [&](database wdb) {
        endpoints eps;
        eps.push_back(std::make_unique<client::endpoint>("fan", wdb, client::endpoint_options{}));
        eps[0]->on("fan", [](client::handler_context& ctx) {
          for (int i = 0; i < 6; ++i)
            ctx.send("fan", {.type = "slow"});
        });
        eps[0]->on("slow", [&](client::handler_context&) {
          {
            std::lock_guard lock(m);
            ran_slow.insert(std::this_thread::get_id());
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        });
        return eps;
      },
      {.workers = 2, .idle_poll = std::chrono::seconds(30), .batch = 1, .publishers = 1});
  rt->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // every worker idle now
  outside.send("fan", {.type = "fan"});
  rt->notify();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (outside.queued() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  rt->stop();
  EXPECT_EQ(outside.queued(), 0) << "a worker waited out its idle poll";
  std::lock_guard lock(m);
  EXPECT_EQ(ran_slow.size(), 2u) << "only one handlers' worker ran the messages sent";
}

TEST_P(runtime_contract, metrics_count_attempts_and_read_the_queues_from_the_database) {
  exec_sql(db(), "CREATE TABLE pings (n BIGINT)");
  client::endpoint outside("outside", db(), {});
  auto rt = tdb().make_runtime(
      [](database wdb) {
        endpoints eps;
        eps.push_back(std::make_unique<client::endpoint>(
            "pinger", wdb,
            client::endpoint_options{.max_attempts = 2,
                                     .retry_base = std::chrono::milliseconds(1),
                                     .retry_cap = std::chrono::milliseconds(1)}));
        eps[0]->on("ping", [](client::handler_context& ctx) {
          run_sql(ctx.database(), "INSERT INTO pings VALUES (1)");
        });
        eps[0]->on("broken", [](client::handler_context&) { throw std::runtime_error("no"); });
        return eps;
      },
      {.workers = 1});
  rt->start();
  for (int i = 0; i < 3; ++i)
    outside.send("pinger", {.type = "ping"});
  outside.send("pinger", {.type = "broken"});
  rt->notify();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto errors = [&] { return query_int(db(), "SELECT count(*) FROM exactly_error_queue"); };
  while ((errors() < 1 || query_int(db(), "SELECT count(*) FROM pings") < 3) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  rt->stop();
  // Queued after the stop: shown as due, read from the database at the scrape.
  outside.send("pinger", {.type = "ping"});
  const std::string text = rt->metrics_text();
  SCOPED_TRACE(text);
  const std::string attempts = "exactly_client_handler_attempts_total{endpoint=\"pinger\",";
  EXPECT_EQ(series_value(text, attempts + "outcome=\"committed\"}"), 3);
  EXPECT_EQ(series_value(text, attempts + "outcome=\"failed\"}"), 1);
  EXPECT_EQ(series_value(text, attempts + "outcome=\"error_queued\"}"), 1);
  EXPECT_EQ(series_value(text, "exactly_client_error_queue_messages{endpoint=\"pinger\"}"),
            errors());
  EXPECT_EQ(errors(), 1);
  EXPECT_EQ(series_value(text, "exactly_client_queue_messages{endpoint=\"pinger\",status=\"due\"}"),
            1);
  EXPECT_EQ(series_value(text, "exactly_client_invocations{state=\"post_pending\"}"), 0);
  EXPECT_EQ(series_value(text, "exactly_client_metrics_database_errors_total"), 0);
}

}  // namespace
}  // namespace exactly::test
