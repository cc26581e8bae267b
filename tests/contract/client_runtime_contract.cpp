// The runtime's worker threads on each engine: idle workers wake on notify() instead of waiting
// out idle_poll.
#include "client_contracts.hpp"

#include <exactly/client/runtime.hpp>

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

}  // namespace
}  // namespace exactly::test
