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

// Three orders for one batch, the second one too big; then, once the batch has failed, what is
// left: no order, every message still queued, no attempt counted.
void expect_the_batch_of_three_fails_whole(client::endpoint& ep, const database& db) {
  ep.send("orders", {.id = "m-1", .type = "submit", .body = {{"id", "a"}, {"amount", 1}}});
  ep.send("orders", {.id = "m-2", .type = "submit", .body = {{"id", "b"}, {"amount", 500}}});
  ep.send("orders", {.id = "m-3", .type = "submit", .body = {{"id", "c"}, {"amount", 3}}});
  EXPECT_THROW(ep.process_due(), storage_error);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(ep.queued(), 3);
  EXPECT_EQ(query_int(db, "SELECT max(attempts) FROM exactly_queue"), 0);
  EXPECT_TRUE(ep.errors().empty());
}

// A trigger's RAISE(ROLLBACK) ends the batch's whole transaction. That is not the failure of the
// handler whose statement met it: the batch fails as storage trouble would (nothing commits, no
// attempt is counted), and the handlers after it do not commit on their own outside it.
TEST(sqlite_endpoint, a_refusal_that_ends_the_transaction_fails_the_whole_batch) {
  const auto tdb = orders_refusing_big_ones();
  client::endpoint ep("orders", tdb->db(), {});
  ep.on("submit", insert_order);
  expect_the_batch_of_three_fails_whole(ep, tdb->db());
}

// A handler that catches the error of a statement whose refusal ended the transaction, and
// returns: nothing of the runtime's commits outside the transaction after it (its message stays
// queued, the handlers before it are rolled back too), and the batch fails as above.
TEST(sqlite_endpoint, a_handler_that_catches_a_refusal_ending_the_transaction_commits_nothing) {
  const auto tdb = orders_refusing_big_ones();
  client::endpoint ep("orders", tdb->db(), {});
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
  expect_the_batch_of_three_fails_whole(ep, tdb->db());
  EXPECT_EQ(caught, 1);
}

// A runtime worker whose batch of one endpoint fails every time (as above) still runs its other
// endpoints' batches.
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
  client::endpoint outside("pinger", tdb->db());
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
}

}  // namespace
}  // namespace exactly::test
