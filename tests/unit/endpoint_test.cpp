// Endpoints on a shared SQLite database (contract/client_endpoint_contract.cpp): atomic handling,
// retries, error queue, restarts.
// The same bodies run on PostgreSQL in exactly_postgres_client_tests; what is SQLite's alone
// follows them.
#include "contract/client_contracts.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/common/storage_error.hpp>

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, endpoint_contract, &open_sqlite_db);

namespace {

// A trigger's RAISE(ROLLBACK) ends the batch's whole transaction. That is not the failure of the
// handler whose statement met it: the batch fails as storage trouble would (nothing commits, no
// attempt is counted), and the handlers after it do not commit on their own outside it.
TEST(sqlite_endpoint, a_refusal_that_ends_the_transaction_fails_the_whole_batch) {
  const auto tdb = open_sqlite_db();
  const database db = tdb->db();
  exec_sql(db,
           "CREATE TABLE orders (id TEXT PRIMARY KEY, amount BIGINT);"
           "CREATE TRIGGER no_big_orders BEFORE INSERT ON orders WHEN NEW.amount > 100"
           " BEGIN SELECT RAISE(ROLLBACK, 'too big'); END");
  client::endpoint ep("orders", db, {});
  ep.on("submit", [](client::handler_context& ctx) {
    run_sql(ctx.database(), "INSERT INTO orders VALUES (?, ?)",
            ctx.incoming().body.at("id").get<std::string>(),
            ctx.incoming().body.at("amount").get<std::int64_t>());
  });
  ep.send("orders", {.id = "m-1", .type = "submit", .body = {{"id", "a"}, {"amount", 1}}});
  ep.send("orders", {.id = "m-2", .type = "submit", .body = {{"id", "b"}, {"amount", 500}}});
  ep.send("orders", {.id = "m-3", .type = "submit", .body = {{"id", "c"}, {"amount", 3}}});
  EXPECT_THROW(ep.process_due(), storage_error);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM orders"), 0);
  EXPECT_EQ(ep.queued(), 3);
  EXPECT_EQ(query_int(db, "SELECT max(attempts) FROM exactly_queue"), 0);
  EXPECT_TRUE(ep.errors().empty());
}

}  // namespace
}  // namespace exactly::test
