// The server goes down in the middle of a workload and comes back a while later on the same port:
// the client keeps retrying its PUTs, POSTs, GETs and DELETEs through the outage and finishes,
// with each invocation executed once and each follow-up committed once, counted in both databases.

#include <child_process.hpp>
#include <echo_server.hpp>

#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace exactly::test {
namespace {

std::int64_t count(const std::string& db, const std::string& sql) {
  sqlite::connection c(db);
  return c.query_int64(sql).value_or(0);
}

TEST(server_outage, the_client_retries_through_it_and_executes_each_invocation_once) {
  constexpr int orders = 60;
  temp_dir dir;
  const std::string server_db = (dir.path() / "server.db").string();
  const std::string client_db = (dir.path() / "client.db").string();
  auto server = std::make_unique<echo_server_process>(server_db, 0);
  const std::uint16_t port = server->port();
  child_process client(
      {EXACTLY_CLIENT_DRIVER, client_db, std::to_string(port), std::to_string(orders)});

  // Down once a few invocations have executed, so the outage meets every step in flight.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count(server_db, "SELECT coalesce(sum(n), 0) FROM echo_executions") < 5) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the workload never started";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server->kill_hard();
  const std::int64_t executed_before = count(server_db, "SELECT sum(n) FROM echo_executions");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // refused connections meanwhile
  // Nothing finished while the server was down: every invocation still open is waiting on it.
  const std::int64_t done_during_outage = count(client_db, "SELECT count(*) FROM results");
  EXPECT_LT(done_during_outage, orders) << "the outage came after the workload ended";
  EXPECT_LE(done_during_outage, executed_before);

  server = std::make_unique<echo_server_process>(server_db, port);
  EXPECT_EQ(client.wait_exit(), 0) << "the client did not finish after the server came back";
  EXPECT_EQ(server->terminate(), 0);

  EXPECT_EQ(count(server_db, "SELECT sum(n) FROM echo_executions"), orders);
  EXPECT_EQ(count(server_db, "SELECT max(n) FROM echo_executions"), 1);
  EXPECT_EQ(count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state IN (1, 2)"),
            0);  // nothing staged or executed left behind
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM results WHERE status = 200"), orders);
  EXPECT_EQ(count(client_db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM bills"), orders);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_error_queue"), 0);
}

}  // namespace
}  // namespace exactly::test
