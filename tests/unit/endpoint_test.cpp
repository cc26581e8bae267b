// Endpoints on a shared SQLite database: atomic handling, retries, error queue, restarts.

#include "client/src/queue_store.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

namespace exactly::client {
namespace {

struct order {
  std::string id;
  int amount = 0;
};
void from_json(const nlohmann::json& j, order& o) {
  j.at("id").get_to(o.id);
  j.at("amount").get_to(o.amount);
}

class endpoint_test : public ::testing::Test {
 protected:
  endpoint_test()
      : dir_(std::filesystem::temp_directory_path() /
             ("exactly-endpoint-" + request_id::mint().to_string())) {
    std::filesystem::create_directories(dir_);
    db_ = std::make_unique<sqlite::connection>((dir_ / "app.db").string());
    db_->exec("CREATE TABLE orders (id TEXT PRIMARY KEY, amount INTEGER)");
  }
  ~endpoint_test() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  endpoint_options opts() {
    return {.max_attempts = 3,
            .retry_base = std::chrono::milliseconds(10),
            .retry_cap = std::chrono::milliseconds(10),
            .clock = [this] { return now_.load(); }};
  }
  std::int64_t orders() { return *db_->query_int64("SELECT count(*) FROM orders"); }

  std::filesystem::path dir_;
  std::unique_ptr<sqlite::connection> db_;
  std::atomic<std::int64_t> now_{1'000'000};
};

TEST_F(endpoint_test, handler_state_sends_and_consumption_commit_together) {
  endpoint orders_ep("orders", *db_, opts());
  endpoint billing("billing", *db_, opts());
  orders_ep.on<order>("submit_order", [](handler_context& ctx, const order& o) {
    ctx.db().prepare("INSERT INTO orders VALUES (?, ?)").bind_all(o.id, o.amount).run();
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

TEST_F(endpoint_test, a_failing_handler_changes_nothing_is_retried_then_error_queued) {
  endpoint ep("orders", *db_, opts());
  int calls = 0;
  ep.on("submit_order", [&](handler_context& ctx) {
    ++calls;
    ctx.db().prepare("INSERT INTO orders VALUES (?, 1)").bind(1, std::to_string(calls)).run();
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
  EXPECT_EQ(orders(), 0);                             // every attempt rolled back
  EXPECT_EQ(queue_store(*db_).queued("billing"), 0);  // and its sends with it
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.id, "m-1");
  EXPECT_EQ(errors[0].attempts, 3);
  EXPECT_EQ(errors[0].error, "payment gateway misconfigured");

  // Fixed, and returned to the queue by an operator.
  ep.on("submit_order", [&](handler_context& ctx) {
    ctx.db().prepare("INSERT INTO orders VALUES ('fixed', 1)").run();
  });
  EXPECT_TRUE(ep.requeue_error(errors[0].seq));
  EXPECT_EQ(ep.process_due(), 1u);
  EXPECT_EQ(orders(), 1);
  EXPECT_TRUE(ep.errors().empty());
}

TEST_F(endpoint_test, unknown_types_and_bad_bodies_go_to_the_error_queue) {
  endpoint ep("orders", *db_, opts());
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

TEST_F(endpoint_test, messages_survive_a_restart) {
  {
    endpoint ep("orders", *db_, opts());
    ep.send("orders", {.type = "submit_order", .body = {{"id", "o-9"}, {"amount", 1}}});
  }
  db_ = std::make_unique<sqlite::connection>((dir_ / "app.db").string());
  endpoint again("orders", *db_, opts());
  again.on<order>("submit_order", [](handler_context& ctx, const order& o) {
    ctx.db().prepare("INSERT INTO orders VALUES (?, ?)").bind_all(o.id, o.amount).run();
  });
  EXPECT_EQ(again.process_due(), 1u);
  EXPECT_EQ(orders(), 1);
}

TEST_F(endpoint_test, a_message_id_is_queued_once) {
  endpoint ep("orders", *db_, opts());
  ep.send("orders", {.id = "same", .type = "t", .body = nullptr});
  ep.send("orders", {.id = "same", .type = "t", .body = nullptr});
  EXPECT_EQ(ep.queued(), 1);
  queue_store queues(*db_);
  EXPECT_EQ(queues.next_due_ms("orders"), now_.load());
  EXPECT_EQ(queues.next_due_ms("billing"), std::nullopt);
}

}  // namespace
}  // namespace exactly::client
