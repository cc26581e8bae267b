// Concurrent copies of one request, and many interactions at once, counted on the server.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace exactly::test {
namespace {

TEST(concurrency, thirty_two_concurrent_posts_of_one_id_execute_once) {
  echo_server server;
  const std::string id = request_id::mint(server.now_ms()).to_string();
  http_client setup(server.port());
  ASSERT_EQ(setup.request("PUT", path_of(id), R"({"status":200,"reply":"once"})", alice).status,
            201u);

  constexpr int copies = 32;
  std::vector<test_response> answers(copies);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < copies; ++i) {
    threads.emplace_back([&, i] {
      http_client c(server.port());
      c.request("GET", "/healthz");  // connect before the race starts
      ++ready;
      while (ready.load() < copies)
        std::this_thread::yield();
      answers[i] = c.request("POST", path_of(id), "", alice);
    });
  }
  for (auto& t : threads)
    t.join();

  int executed = 0, replayed = 0;
  for (const auto& a : answers) {
    EXPECT_EQ(a.status, 200u);
    EXPECT_EQ(a.body, R"({"reply":"once"})");
    if (a.header("exactly-once-outcome") == "executed")
      ++executed;
    if (a.header("exactly-once-outcome") == "replayed")
      ++replayed;
  }
  EXPECT_EQ(executed, 1);
  EXPECT_EQ(replayed, copies - 1);
  EXPECT_EQ(server.executions(id), 1);
  EXPECT_TRUE(eventually([&] { return server.deliveries(id) == 1; }));
  EXPECT_EQ(server.outbox_pending(), 0);
}

TEST(concurrency, many_full_cycles_in_parallel_leave_only_tombstones) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 1000;
  echo_server server(cfg);
  constexpr int workers = 8, per_worker = 40;
  const auto [all_ids, failures] = full_cycles_in_parallel(server.port(), workers, per_worker, [&] {
    return request_id::mint(server.now_ms()).to_string();
  });
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(server.executions_total(), workers * per_worker);
  for (const auto& id : all_ids)
    EXPECT_EQ(server.executions(id), 1) << id;
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged, 0);
  EXPECT_EQ(rows.executed, 0);
  EXPECT_EQ(rows.tombstone, workers * per_worker);
  EXPECT_TRUE(eventually([&] { return server.outbox_pending() == 0; }));
}

}  // namespace
}  // namespace exactly::test
