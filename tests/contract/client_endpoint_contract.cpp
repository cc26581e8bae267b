// Endpoints on a shared database, on each engine: atomic handling, retries, error queue, restarts.
#include "client_contracts.hpp"

#include "client/src/queue_store.hpp"

#include <exactly/client/endpoint.hpp>

namespace exactly::test {
namespace {

using client::endpoint;
using client::handler_context;

struct order {
  std::string id;
  int amount = 0;
};
void from_json(const nlohmann::json& j, order& o) {
  j.at("id").get_to(o.id);
  j.at("amount").get_to(o.amount);
}

TEST_P(endpoint_contract, handler_state_sends_and_consumption_commit_together) {
  endpoint orders_ep("orders", db(), opts());
  endpoint billing("billing", db(), opts());
  orders_ep.on<order>("submit_order", [](handler_context& ctx, const order& o) {
    run_sql(ctx.database(), "INSERT INTO orders VALUES (?, ?)", o.id, o.amount);
    ctx.send("billing", {.type = "bill_customer", .body = {{"order", o.id}}});
  });
  int billed = 0;
  billing.on("bill_customer", [&](handler_context& ctx) {
    EXPECT_EQ(ctx.incoming().body.at("order"), "o-1");
    ++billed;
  });
  orders_ep.send("orders", {.type = "submit_order", .body = {{"id", "o-1"}, {"amount", 5}}});
  EXPECT_EQ(orders_ep.process_due(), 1u);
  EXPECT_EQ(orders(), 1);
  EXPECT_EQ(orders_ep.queued(), 0);
  EXPECT_EQ(billing.process_due(), 1u);
  EXPECT_EQ(billed, 1);
  EXPECT_EQ(billing.process_due(), 0u);  // nothing handled twice
}

TEST_P(endpoint_contract, a_failing_handler_changes_nothing_is_retried_then_error_queued) {
  endpoint ep("orders", db(), opts());
  int calls = 0;
  ep.on("submit_order", [&](handler_context& ctx) {
    ++calls;
    run_sql(ctx.database(), "INSERT INTO orders VALUES (?, 1)", std::to_string(calls));
    ctx.send("billing", {.type = "bill_customer", .body = nullptr});
    throw std::runtime_error("payment gateway misconfigured");
  });
  ep.send("orders", {.id = "m-1", .type = "submit_order", .body = nullptr});
  EXPECT_EQ(ep.process_due(), 0u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ep.process_due(), 0u);  // not due yet: backoff
  EXPECT_EQ(calls, 1);
  now_ += 10;
  EXPECT_EQ(ep.process_due(), 0u);
  now_ += 10;
  EXPECT_EQ(ep.process_due(), 1u);  // third attempt fails: error queue
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(orders(), 0);                                     // every attempt rolled back
  EXPECT_EQ(client::queue_store(db()).queued("billing"), 0);  // and its sends with it
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.id, "m-1");
  EXPECT_EQ(errors[0].attempts, 3);
  EXPECT_EQ(errors[0].error, "payment gateway misconfigured");

  // Fixed, and returned to the queue by an operator.
  ep.on("submit_order", [&](handler_context& ctx) {
    run_sql(ctx.database(), "INSERT INTO orders VALUES ('fixed', 1)");
  });
  EXPECT_TRUE(ep.requeue_error(errors[0].seq));
  EXPECT_EQ(ep.process_due(), 1u);
  EXPECT_EQ(orders(), 1);
  EXPECT_TRUE(ep.errors().empty());
}

// A statement of the handler that the database refuses (here a duplicate key) fails that attempt
// only: it is rolled back and tried again later, then error-queued with the database's message,
// while the other messages of its batch commit. It is not storage trouble, which would roll back
// the whole batch and retry it for ever.
TEST_P(endpoint_contract, a_handler_statement_the_database_refuses_fails_that_attempt_only) {
  endpoint ep("orders", db(), opts());
  ep.on<order>("submit_order", [](handler_context& ctx, const order& o) {
    run_sql(ctx.database(), "INSERT INTO orders VALUES (?, ?)", o.id, o.amount);
  });
  ep.send("orders", {.id = "m-1", .type = "submit_order", .body = {{"id", "o-1"}, {"amount", 1}}});
  ep.send("orders", {.id = "m-2", .type = "submit_order", .body = {{"id", "o-1"}, {"amount", 2}}});
  ep.send("orders", {.id = "m-3", .type = "submit_order", .body = {{"id", "o-3"}, {"amount", 3}}});
  EXPECT_EQ(ep.process_due(), 2u);  // m-1 and m-3 commit; m-2 failed its first attempt
  EXPECT_EQ(orders(), 2);
  now_ += 10;
  ep.process_due();
  now_ += 10;
  EXPECT_EQ(ep.process_due(), 1u);  // the third attempt fails: error queue
  EXPECT_EQ(orders(), 2);
  EXPECT_EQ(ep.queued(), 0);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.id, "m-2");
  EXPECT_EQ(errors[0].attempts, 3);
  EXPECT_FALSE(errors[0].error.empty());
}

TEST_P(endpoint_contract, unknown_types_and_bad_bodies_go_to_the_error_queue) {
  endpoint ep("orders", db(), opts());
  ep.on<order>("submit_order", [](handler_context&, const order&) {});
  ep.send("orders", {.type = "no_such_type", .body = nullptr});
  ep.send("orders", {.type = "submit_order", .body = {{"id", 3}}});  // does not convert
  EXPECT_EQ(ep.process_due(), 1u);                                   // unknown type: at once
  now_ += 100;
  ep.process_due();
  now_ += 100;
  ep.process_due();
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].error.find("no handler"), std::string::npos);
  EXPECT_EQ(errors[1].attempts, 3);
}

TEST_P(endpoint_contract, messages_survive_a_restart) {
  {
    endpoint ep("orders", db(), opts());
    ep.send("orders", {.type = "submit_order", .body = {{"id", "o-9"}, {"amount", 1}}});
  }
  tdb().reopen();
  endpoint again("orders", db(), opts());
  again.on<order>("submit_order", [](handler_context& ctx, const order& o) {
    run_sql(ctx.database(), "INSERT INTO orders VALUES (?, ?)", o.id, o.amount);
  });
  EXPECT_EQ(again.process_due(), 1u);
  EXPECT_EQ(orders(), 1);
}

TEST_P(endpoint_contract, a_message_id_is_queued_once) {
  endpoint ep("orders", db(), opts());
  ep.send("orders", {.id = "same", .type = "t", .body = nullptr});
  ep.send("orders", {.id = "same", .type = "t", .body = nullptr});
  EXPECT_EQ(ep.queued(), 1);
  client::queue_store queues(db());
  EXPECT_EQ(queues.next_due_ms("orders"), now_.load());
  EXPECT_EQ(queues.next_due_ms("billing"), std::nullopt);
}

// send_in_transaction queues with the caller's own writes, on either engine: both or neither.
TEST_P(endpoint_contract, send_in_transaction_commits_or_rolls_back_with_the_caller) {
  endpoint ep("orders", db(), opts());
  {
    database_transaction tx(db());
    run_sql(db(), "INSERT INTO orders VALUES ('rolled-back', 1)");
    client::send_in_transaction(db(), "orders", {.type = "t", .body = nullptr});
  }
  EXPECT_EQ(ep.queued(), 0);
  {
    database_transaction tx(db());
    run_sql(db(), "INSERT INTO orders VALUES ('kept', 1)");
    client::send_in_transaction(db(), "orders", {.type = "t", .body = nullptr});
    tx.commit();
  }
  EXPECT_EQ(ep.queued(), 1);
  EXPECT_EQ(orders(), 1);
}

}  // namespace
}  // namespace exactly::test
