// PostgreSQL crashes (pg_ctl stop -m immediate) under a client runtime that is invoking a real
// server, and comes back: the workers' connections and the journal's reconnect, commits whose
// outcome was lost are found out by the conditional steps, and each invocation still executes
// once with one follow-up. Orphans whose journal entries the crash took back expire by their
// staged TTL.
#include "client_test_db.hpp"
#include "pg_cluster.hpp"

#include <echo_server.hpp>

#include <exactly/client/runtime.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace exactly::test {
namespace {

TEST(postgres_client_outage, a_crashed_and_restarted_postgres_loses_or_repeats_nothing) {
  pg_cluster own;  // a cluster of this test's own, to crash
  const std::string conninfo = own.fresh_schema();
  auto tdb = open_pg_db(conninfo);
  exec_sql(tdb->db(),
           "CREATE TABLE bills (order_id TEXT PRIMARY KEY);"
           "CREATE TABLE results (order_id TEXT PRIMARY KEY, status BIGINT, n BIGINT)");
  echo_server_config cfg;
  cfg.max_staged_per_principal = 10000;
  echo_server server(cfg);
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  const std::string url = "http://" + host + "/vectors/echo/{id}";
  std::shared_ptr<client::http_transport> transport =
      client::make_beast_transport({.keys = {{host, "alice-key"}}});
  constexpr int n = 80;
  {
    client::endpoint seeder("billing", tdb->db(), {});
    database_transaction tx(tdb->db());
    for (int i = 0; i < n; ++i) {
      client::send_in_transaction(
          tdb->db(), "billing",
          {.id = std::to_string(i), .type = "bill", .body = {{"order", "o-" + std::to_string(i)}}});
    }
    tx.commit();
  }
  client::runtime rt(
      pg::options{.conninfo = conninfo,
                  .reconnect_base = std::chrono::milliseconds(20),
                  .reconnect_cap = std::chrono::milliseconds(200)},
      [&](pg::connection& c) {
        endpoints eps;
        eps.push_back(std::make_unique<client::endpoint>(
            "billing", c,
            client::endpoint_options{.retry_base = std::chrono::milliseconds(5),
                                     .retry_cap = std::chrono::milliseconds(50),
                                     .transport = transport,
                                     .orphan_grace = std::chrono::milliseconds(200)}));
        eps[0]->on("bill", [url](client::handler_context& ctx) {
          const std::string order = ctx.incoming().body.at("order");
          ctx.pg().query("INSERT INTO bills VALUES ($1)", order);
          ctx.invoke_http(url, R"({"status":200})", "application/json",
                          {.type = "bill_result", .body = {{"order", order}}});
        });
        eps[0]->on("bill_result", [](client::handler_context& ctx) {
          ctx.pg().query(
              "INSERT INTO results VALUES ($1, $2, 1)"
              " ON CONFLICT(order_id) DO UPDATE SET n = results.n + 1",
              ctx.incoming().body.at("order").get<std::string>(),
              static_cast<int>(ctx.response()->status));
        });
        return eps;
      },
      {.workers = 2, .idle_poll = std::chrono::milliseconds(5), .batch = 4});
  rt.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  auto results = [&] {
    try {
      auto observer = open_pg_db(conninfo);
      return query_int(observer->db(), "SELECT count(*) FROM results");
    } catch (const pg::error&) {
      return std::int64_t{-1};
    }
  };
  while (results() < n / 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::int64_t before_crash = results();
  own.stop(true);  // a crash, in the middle of the run
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  own.start();
  auto pending = [&] {
    try {
      auto observer = open_pg_db(conninfo);
      return query_int(observer->db(),
                       "SELECT (SELECT count(*) FROM exactly_invocations)"
                       " + (SELECT count(*) FROM exactly_queue)"
                       " + (SELECT count(*) FROM exactly_attempts)");
    } catch (const pg::error&) {
      return std::int64_t{-1};
    }
  };
  while ((results() < n || pending() != 0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rt.stop();

  EXPECT_LT(before_crash, n) << "the run was over before the crash";
  auto check = open_pg_db(conninfo);
  const database db = check->db();
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM bills"), n);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM results WHERE status = 200"), n);
  EXPECT_EQ(query_int(db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_attempts"), 0);
  // Every executed id was DELETEd. The journal commits without waiting for its flush
  // (synchronous_commit=off), so the crash may take back the entries of attempts that were
  // between their PUT and their commit: those ids stay staged, never POSTed, until the staged
  // TTL expires them. At most one batch per worker was in flight.
  EXPECT_EQ(server.rows().executed, 0);
  EXPECT_LE(server.rows().staged, 2 * 4);
  server.advance_seconds(24 * 3600 + 1);
  server.sweep();
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.executions_total(), n);
}

}  // namespace
}  // namespace exactly::test
