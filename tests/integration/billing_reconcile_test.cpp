// The billing demo's reconciliation must see what it promises to see: a clean run reads clean,
// and each kind of damage (a double charge, a lost order, a leftover row, a dead letter) is a
// violation. The demo itself runs as the ctest billing_demo_reduced.

#include <echo_server.hpp>
#include <orders_app.hpp>
#include <payment_app.hpp>
#include <reconcile.hpp>

#include "client/src/invocation_store.hpp"
#include "client/src/queue_store.hpp"

#include <gtest/gtest.h>

#include <functional>

namespace exactly::test {
namespace {

constexpr std::int64_t opening = 1000;

class billing_reconcile : public ::testing::Test {
 protected:
  billing_reconcile() {
    {
      server::connector c({.db_path = payment_db()});
      server::server_options so;
      so.open_mode = true;
      server::http_server http(so, c);
      samples::payment::install(c, http, opening);
    }
    sqlite::connection o(orders_db());
    samples::orders::create_schema(o);
    client::queue_store queues(o);
    client::invocation_store invocations(o);
    // A clean outcome: order-1 billed to alice, order-2 declined for bob.
    o.exec(
        "INSERT INTO orders VALUES ('order-1', 'alice', 100, 'billed', 'r1', 1),"
        " ('order-2', 'bob', 5000, 'failed', '', 1);"
        "INSERT INTO billing_invocations VALUES ('order-1', 'r1', 1), ('order-2', 'r2', 1);"
        "INSERT INTO billing_responses VALUES ('order-1', 200, 1), ('order-2', 402, 1);");
    payment(
        "INSERT INTO accounts(customer_id, owner, balance_cents)"
        " VALUES ('alice', 'billing', 900), ('bob', 'billing', 1000);"
        "INSERT INTO authorizations VALUES ('r1', 'alice', 100, 'order-1');"
        "INSERT INTO ledger VALUES ('r1', 'alice', 100);"
        "INSERT INTO declines(request_id, customer_id, amount_cents, reference)"
        " VALUES ('r2', 'bob', 5000, 'order-2');");
  }

  std::string payment_db() const { return (dir_.path() / "payment.db").string(); }
  std::string orders_db() const { return (dir_.path() / "orders.db").string(); }
  void payment(const std::string& sql) { sqlite::connection(payment_db()).exec(sql); }
  void orders(const std::string& sql) { sqlite::connection(orders_db()).exec(sql); }
  samples::demo::reconciliation check(std::int64_t submitted = 2) {
    return samples::demo::reconcile(orders_db(), payment_db(), opening, submitted);
  }

  temp_dir dir_;
};

TEST_F(billing_reconcile, a_clean_run_reads_clean) {
  const auto r = check();
  EXPECT_TRUE(samples::demo::violations(r).empty());
  EXPECT_TRUE(samples::demo::quiet(r));
  EXPECT_EQ(r.billed, 1);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.executions, 2);
  ASSERT_EQ(r.balances.size(), 2u);
  EXPECT_EQ(r.balances[0].expected_cents, 900);
}

TEST_F(billing_reconcile, a_double_charge_is_a_violation) {
  payment(
      "INSERT INTO authorizations VALUES ('r1b', 'alice', 100, 'order-1');"
      "INSERT INTO ledger VALUES ('r1b', 'alice', 100);"
      "UPDATE accounts SET balance_cents = 800 WHERE customer_id = 'alice'");
  const auto r = check();
  EXPECT_EQ(r.duplicate_executions, 1);
  EXPECT_EQ(r.balance_mismatches, 1);
  EXPECT_FALSE(samples::demo::violations(r).empty());
}

TEST_F(billing_reconcile, each_kind_of_damage_is_a_violation) {
  const std::vector<std::pair<const char*, std::function<void()>>> damage = {
      {"order lost before Orders stored it", [] {}},
      {"order never finished",
       [this] { orders("UPDATE orders SET status = 'submitted' WHERE order_id = 'order-2'"); }},
      {"outcome handled twice",
       [this] { orders("UPDATE orders SET outcomes = 2 WHERE order_id = 'order-1'"); }},
      {"follow-up handled twice",
       [this] { orders("UPDATE billing_responses SET handled = 2 WHERE order_id = 'order-2'"); }},
      {"ledger entry missing", [this] { payment("DELETE FROM ledger"); }},
      {"billed without an authorization", [this] { payment("DELETE FROM authorizations"); }},
      {"staged row left",
       [this] {
         payment(
             "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, state_since_ms)"
             " VALUES ('/payment/authorize/{id}', 'x', 'p', 0, 1, 0)");
       }},
      {"client invocation left",
       [this] {
         orders(
             "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
             " created_ms) VALUES ('x', 'billing', 'u', '{}', 3, 0, 0)");
       }},
      {"server dead letter",
       [this] {
         payment(
             "INSERT INTO exactly_server_dead_letters VALUES (1, 't', '{}', 's', 0, 1, 'e', 0)");
       }},
  };
  constexpr auto replace =
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing;
  temp_dir clean;
  std::filesystem::copy(dir_.path(), clean.path(), replace);
  for (std::size_t i = 0; i < damage.size(); ++i) {
    SCOPED_TRACE(damage[i].first);
    std::filesystem::copy(clean.path(), dir_.path(), replace);  // each case alone
    ASSERT_TRUE(samples::demo::violations(check()).empty());
    damage[i].second();
    EXPECT_FALSE(samples::demo::violations(check(i == 0 ? 3 : 2)).empty());
  }
}

}  // namespace
}  // namespace exactly::test
