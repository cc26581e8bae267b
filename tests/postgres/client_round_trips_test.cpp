// Round trips of the client runtime's batches on PostgreSQL, counted in libpq's trace of the
// endpoint's connection: what grows with the batch is one round trip per handler (its savepoint's
// RELEASE, or, when it makes a statement of its own, that statement, the RELEASE going with the
// next round trip). The claim of a batch's messages is one query, and so is the publisher's claim
// of the due steps of every state; the attempts' advisory locks, the move of a claimed row on from
// post_pending, and a follow-up's move past awaiting_follow_up go out with the next round trip.
// Every invocation still executes once, and its follow-up commits once.
#include "client_test_db.hpp"
#include "pg_round_trips.hpp"

#include <echo_server.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/common/postgres.hpp>

#include <gtest/gtest.h>

#include <string>

namespace exactly::test {
namespace {

// The round trips of one process_due() and of the publish_due() after it, for a batch of `n`.
struct batch_round_trips {
  int process = 0;
  int publish = 0;
};

// A fresh database whose endpoint handles `n` queued "bill" messages in one batch, each invoking
// the echo route of `server` once, with a follow-up; each handler makes one statement of its own
// when `own_statement`, else none.
batch_round_trips run_batch_of(echo_server& server, int n, bool own_statement = false) {
  const std::unique_ptr<test_db> tdb = open_pg_db();
  const database db = tdb->db();
  const std::string url =
      "http://127.0.0.1:" + std::to_string(server.port()) + "/vectors/echo/{id}";
  client::endpoint ep(
      "billing", db,
      {.transport = client::make_beast_transport(
           {.keys = {{"127.0.0.1:" + std::to_string(server.port()), "alice-key"}}})});
  ep.on("bill", [url, own_statement](client::handler_context& ctx) {
    if (own_statement)
      ctx.pg().query("SELECT 1");
    ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "billed"});
  });
  int followed = 0;
  ep.on("billed", [&followed, own_statement](client::handler_context& ctx) {
    if (own_statement)
      ctx.pg().query("SELECT 1");
    ++followed;
  });
  {
    database_transaction tx(db);
    for (int i = 0; i < n; ++i)
      client::send_in_transaction(db, "billing", {.id = std::to_string(i), .type = "bill"});
    tx.commit();
  }
  batch_round_trips r;
  std::size_t handled = 0;
  r.process = round_trips(db.as_postgres(), [&] { handled = ep.process_due(); });
  r.publish = round_trips(db.as_postgres(), [&] { ep.publish_due(); });
  EXPECT_EQ(handled, static_cast<std::size_t>(n));
  EXPECT_EQ(followed, n);                  // each follow-up ran once, with its POST's answer
  EXPECT_EQ(ep.pending_invocations(), n);  // each awaits its DELETE
  return r;
}

TEST(postgres_client_round_trips, a_batch_grows_by_its_handlers_releases_not_by_claims_or_locks) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 10000;
  echo_server server(cfg);
  const batch_round_trips two = run_batch_of(server, 2);
  const batch_round_trips six = run_batch_of(server, 6);
  EXPECT_EQ(server.executions_total(), 8);
  // Per message of the batch: the RELEASE of its handler's savepoint, nothing else.
  EXPECT_EQ(six.process - two.process, 4) << two.process << " then " << six.process;
  // Per POST answered: the RELEASE of its follow-up's savepoint, nothing else; besides them, the
  // claim of the due steps (one query for the three states) and the COMMIT.
  EXPECT_EQ(six.publish - two.publish, 4) << two.publish << " then " << six.publish;
  EXPECT_EQ(two.publish, 2 + 2);
}

// A handler (or follow-up) that makes a statement of its own takes its savepoint's SAVEPOINT
// along with it, so that savepoint's RELEASE waits for the next round trip: per message, the
// handler's statement is all that grows, not a RELEASE beside it.
TEST(postgres_client_round_trips, a_handlers_release_goes_with_the_next_round_trip) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 10000;
  echo_server server(cfg);
  const batch_round_trips two = run_batch_of(server, 2, true);
  const batch_round_trips six = run_batch_of(server, 6, true);
  EXPECT_EQ(server.executions_total(), 8);
  EXPECT_EQ(six.process - two.process, 4) << two.process << " then " << six.process;
  EXPECT_EQ(six.publish - two.publish, 4) << two.publish << " then " << six.publish;
}

}  // namespace
}  // namespace exactly::test
