// PostgreSQL itself crashes (pg_ctl stop -m immediate) under load and comes back: requests
// answer 503 meanwhile, /healthz says not ready, the server reconnects by itself, and every
// acknowledged POST executed exactly once. PUTs the crash took back (they are committed unflushed)
// are staged again after a 404 to their POST, as the client runtime does.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <pg_cluster.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace exactly::test {
namespace {

// Whether `pred` holds within `limit` (the reconnection backoff reaches 5 s).
template <class F>
bool within(std::chrono::seconds limit, F pred) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

TEST(postgres_outage, a_crash_of_postgres_under_load_loses_nothing_and_service_resumes) {
  pg_cluster own;  // a cluster of this test's own: it is crashed here
  echo_server_config cfg;
  cfg.postgres = own.fresh_schema();
  cfg.max_staged_per_principal = 100000;
  echo_server server(cfg);

  std::atomic<bool> stop{false};
  std::atomic<int> unavailable{0};  // 503 answers seen
  std::mutex m;
  std::vector<std::pair<std::string, std::string>> acknowledged;  // (id, outcome)
  // Sends until an answer other than 503 comes (a 503 means: nothing committed, try again).
  auto until_answered = [&](http_client& c, const std::string& method, const std::string& id,
                            const std::string& body) {
    for (;;) {
      const test_response r = c.request(method, path_of(id), body, alice);
      if (r.status != 503)
        return r;
      ++unavailable;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  std::vector<std::thread> clients;
  std::atomic<int> faults{0};
  std::atomic<int> restaged{0};  // ids PUT again after a 404 to their POST
  for (int w = 0; w < 4; ++w) {
    clients.emplace_back([&] {
      http_client c(server.port());
      while (!stop.load()) {
        const std::string id = request_id::mint(server.now_ms()).to_string();
        const auto put = until_answered(c, "PUT", id, R"({"status":200})");
        if (put.status != 201 && put.status != 200)
          ++faults;
        auto post = until_answered(c, "POST", id, "");
        // The crash may take back a PUT answered unflushed: its id is unknown again, and the
        // client stages it again from the body it kept, then POSTs again (spec §9).
        while (post.status == 404) {
          ++restaged;
          const auto again = until_answered(c, "PUT", id, R"({"status":200})");
          if (again.status != 201 && again.status != 200 && again.status != 410)
            ++faults;
          post = until_answered(c, "POST", id, "");
        }
        if (post.status != 200)
          ++faults;
        std::lock_guard lock(m);
        acknowledged.emplace_back(id, post.header("exactly-once-outcome"));
      }
    });
  }
  http_client probe(server.port());
  const auto acked = [&] {
    std::lock_guard lock(m);
    return acknowledged.size();
  };
  ASSERT_TRUE(eventually([&] { return acked() >= 100; }));
  own.stop(true);  // a crash of PostgreSQL: no shutdown checkpoint
  EXPECT_TRUE(eventually([&] { return probe.request("GET", "/healthz").status == 503; }));
  const std::size_t during = acked();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_LE(acked(), during + 4);  // at most the answers already on their way
  own.start();
  EXPECT_TRUE(within(std::chrono::seconds(30),
                     [&] { return probe.request("GET", "/healthz").status == 200; }));
  const std::size_t after_restart = acked();
  EXPECT_TRUE(within(std::chrono::seconds(30),
                     [&] { return acked() >= after_restart + 100; }));  // serving again
  stop = true;
  for (auto& t : clients)
    t.join();

  EXPECT_EQ(faults.load(), 0);
  EXPECT_GT(unavailable.load(), 0);  // the outage was seen
  std::set<std::string> ids;
  for (const auto& [id, outcome] : acknowledged) {
    ids.insert(id);
    EXPECT_EQ(server.executions(id), 1) << id << " answered " << outcome;
  }
  EXPECT_EQ(ids.size(), acknowledged.size());
  EXPECT_EQ(server.executions_total(), static_cast<std::int64_t>(acknowledged.size()));
  EXPECT_LE(restaged.load(), 4);  // at most the PUTs in flight at the crash, one per client
}

}  // namespace
}  // namespace exactly::test
