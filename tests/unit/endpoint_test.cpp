// Endpoints on a shared SQLite database (contract/client_endpoint_contract.cpp): atomic handling,
// retries, error queue, restarts.
// The same bodies run on PostgreSQL in exactly_postgres_client_tests; what is SQLite's alone
// follows them.
#include "contract/client_contracts.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/storage_error.hpp>

#include <chrono>
#include <thread>

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, endpoint_contract, &open_sqlite_db);

namespace {

// An orders table whose trigger ends the whole transaction (RAISE(ROLLBACK)) on an amount above
// 100, on a fresh database.
std::unique_ptr<test_db> orders_refusing_big_ones() {
  auto tdb = open_sqlite_db();
  exec_sql(tdb->db(),
           "CREATE TABLE orders (id TEXT PRIMARY KEY, amount BIGINT);"
           "CREATE TRIGGER no_big_orders BEFORE INSERT ON orders WHEN NEW.amount > 100"
           " BEGIN SELECT RAISE(ROLLBACK, 'too big'); END");
  return tdb;
}

// The order a "submit" message carries into the orders table.
void insert_order(client::handler_context& ctx) {
  run_sql(ctx.database(), "INSERT INTO orders VALUES (?, ?)",
          ctx.incoming().body.at("id").get<std::string>(),
          ctx.incoming().body.at("amount").get<std::int64_t>());
}

// Three orders for one batch, the second one too big; once the batch has failed and each
// message has run alone: the other two orders committed, the big one still queued with one
// attempt counted; after its second attempt, alone again, it is in the error queue with the
// error `error`. Both process_due() calls leave `ep` with nothing to throw.
void expect_only_the_big_order_is_charged(client::endpoint& ep, const database& db,
                                          const std::string& error) {
  ep.send("orders", {.id = "m-1", .type = "submit", .body = {{"id", "a"}, {"amount", 1}}});
  ep.send("orders", {.id = "m-2", .type = "submit", .body = {{"id", "b"}, {"amount", 500}}});
  ep.send("orders", {.id = "m-3", .type = "submit", .body = {{"id", "c"}, {"amount", 3}}});
  EXPECT_EQ(ep.process_due(), 2u);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM orders WHERE id IN ('a', 'c')"), 2);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM orders"), 2);
  EXPECT_EQ(ep.queued(), 1);
  EXPECT_EQ(query_int(db, "SELECT attempts FROM exactly_queue WHERE message_id = 'm-2'"), 1);
  EXPECT_TRUE(ep.errors().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past its backoff
  EXPECT_EQ(ep.process_due(), 1u);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM orders"), 2);
  EXPECT_EQ(ep.queued(), 0);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.id, "m-2");
  EXPECT_NE(errors[0].error.find(error), std::string::npos) << errors[0].error;
}

// Two attempts, retried 1 ms after a failure.
client::endpoint_options two_quick_attempts() {
  return {.max_attempts = 2,
          .retry_base = std::chrono::milliseconds(1),
          .retry_cap = std::chrono::milliseconds(1)};
}

// A trigger's RAISE(ROLLBACK) ends the batch's whole transaction, so the handlers after it cannot
// go on in it: nothing of that batch commits. Each message then runs as a batch of its own: the
// other two commit, and the one refused alone is charged an attempt as a failed handler is,
// rather than failing every batch it is in for ever.
TEST(sqlite_endpoint, a_refusal_that_ends_the_transaction_is_charged_to_its_message_alone) {
  const auto tdb = orders_refusing_big_ones();
  client::endpoint ep("orders", tdb->db(), two_quick_attempts());
  int runs = 0;
  ep.on("submit", [&runs](client::handler_context& ctx) {
    ++runs;
    insert_order(ctx);
  });
  expect_only_the_big_order_is_charged(ep, tdb->db(), "too big");
  EXPECT_EQ(runs, 2 + 3 + 1);  // the batch up to the big one, each alone, its second attempt
}

// A handler that catches the error of a statement whose refusal ended the transaction, and
// returns: nothing of the runtime's commits outside the transaction after it (the handlers
// before it are rolled back too), and its message is charged as above.
TEST(sqlite_endpoint, a_handler_that_catches_a_refusal_ending_the_transaction_commits_nothing) {
  const auto tdb = orders_refusing_big_ones();
  client::endpoint ep("orders", tdb->db(), two_quick_attempts());
  int caught = 0;
  ep.on("submit", [&caught](client::handler_context& ctx) {
    try {
      database_transaction own(ctx.database());  // a savepoint, as a careful handler makes
      insert_order(ctx);
      own.commit();
    } catch (const storage_error&) {
      ++caught;  // and returns as if only its own statement had failed
    }
  });
  expect_only_the_big_order_is_charged(ep, tdb->db(), "ended the batch's transaction");
  EXPECT_EQ(caught, 3);  // in the batch, alone, and in its second attempt
}

// A runtime worker whose batch of one endpoint fails every time (a refusal as above, and the
// attempt it is charged refused too) still runs its other endpoints' batches.
TEST(sqlite_endpoint, an_endpoint_whose_batch_fails_does_not_hold_up_the_workers_others) {
  const auto tdb = open_sqlite_db();
  exec_sql(tdb->db(),
           "CREATE TABLE orders (id TEXT PRIMARY KEY, amount BIGINT);"
           "CREATE TRIGGER no_orders BEFORE INSERT ON orders"
           " BEGIN SELECT RAISE(ROLLBACK, 'no orders today'); END;"
           "CREATE TABLE pings (n BIGINT)");
  auto rt = tdb->make_runtime(
      [](database wdb) {
        endpoints eps;
        eps.push_back(std::make_unique<client::endpoint>("orders", wdb));
        eps.back()->on("submit", [](client::handler_context& ctx) {
          run_sql(ctx.database(), "INSERT INTO orders VALUES ('a', 1)");
        });
        eps.push_back(std::make_unique<client::endpoint>("pinger", wdb));
        eps.back()->on("ping", [](client::handler_context& ctx) {
          run_sql(ctx.database(), "INSERT INTO pings VALUES (1)");
        });
        return eps;
      },
      {.workers = 1, .idle_poll = std::chrono::milliseconds(5)});
  client::endpoint outside("pinger", tdb->db());  // makes the queue's tables
  exec_sql(tdb->db(),
           "CREATE TRIGGER no_retries BEFORE UPDATE OF attempts ON exactly_queue"
           " BEGIN SELECT RAISE(ABORT, 'no retries either'); END");
  outside.send("orders", {.type = "submit"});
  outside.send("pinger", {.type = "ping"});
  rt->start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (query_int(tdb->db(), "SELECT count(*) FROM pings") < 1 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  rt->stop();
  EXPECT_EQ(query_int(tdb->db(), "SELECT count(*) FROM pings"), 1);
  EXPECT_EQ(query_int(tdb->db(), "SELECT count(*) FROM exactly_queue"), 1);  // the order, still
  EXPECT_EQ(query_int(tdb->db(), "SELECT attempts FROM exactly_queue"), 0);
}

}  // namespace
}  // namespace exactly::test
