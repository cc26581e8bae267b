// Several publishers on one PostgreSQL invocations table: each due step is sent by one of them,
// counted by the requests that reached the transport (not by calls that returned).
#include "client_test_db.hpp"

#include <counting_transport.hpp>

#include <echo_server.hpp>

#include <exactly/client/endpoint.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace exactly::test {
namespace {

// A publisher whose steps are held in another's open transaction sends the next due ones, not
// the same ones again: with the read apart from the transaction that records the outcomes, both
// read the same oldest steps and every POST of the first went out twice.
TEST(postgres_shared_publish, a_publisher_passes_over_the_steps_another_sends_and_sends_the_next) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 100;
  echo_server server(cfg);
  const std::string url = echo_url(server.port());
  auto transport = counting_echo_transport(server.port());
  auto tdb = open_pg_db();
  const database db = tdb->db();
  const auto make_endpoint = [&](const database& on) {
    auto ep = std::make_unique<client::endpoint>("billing", on,
                                                 client::endpoint_options{.transport = transport});
    ep->on("bill", [url](client::handler_context& ctx) {
      ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "billed"});
    });
    return ep;
  };
  // 16 invocations committed, their POSTs due.
  auto seeder = make_endpoint(db);
  {
    database_transaction tx(db);
    for (int i = 0; i < 16; ++i)
      client::send_in_transaction(db, "billing", {.id = std::to_string(i), .type = "bill"});
    tx.commit();
  }
  ASSERT_EQ(seeder->process_due(16), 16u)
      << query_int(db, "SELECT count(*) FROM exactly_queue") << " "
      << db.as_postgres()
             .query("SELECT coalesce(max(last_error), '') FROM exactly_queue")
             .text(0, 0);
  ASSERT_TRUE(transport->posts().empty());

  // A's first follow-up waits, inside A's publishing transaction, until B has had its turn (at
  // most 5 s, so that a B waiting on A's rows cannot hang the test).
  std::promise<void> a_inside;
  std::promise<void> b_done;
  std::shared_future<void> b_finished = b_done.get_future().share();
  std::map<std::string, int> followed;  // by publisher
  std::mutex followed_mutex;
  const auto follow = [&](const char* who) {
    std::lock_guard lock(followed_mutex);
    return ++followed[who];
  };
  auto a_db = tdb->another();
  auto a = make_endpoint(a_db->db());
  bool a_waited_out = false;  // B did not finish while A held its steps: B waited on A's locks
  a->on("billed", [&](client::handler_context&) {
    if (follow("a") == 1) {
      a_inside.set_value();
      a_waited_out = b_finished.wait_for(std::chrono::seconds(5)) == std::future_status::timeout;
    }
  });
  auto b_db = tdb->another();
  auto b = make_endpoint(b_db->db());
  b->on("billed", [&](client::handler_context&) { follow("b"); });
  std::size_t a_published = 0;
  std::thread a_publisher([&] { a_published = a->publish_due(8); });
  a_inside.get_future().wait();
  const std::size_t b_published = b->publish_due(8);
  b_done.set_value();
  a_publisher.join();

  EXPECT_FALSE(a_waited_out) << "B waited for A's steps instead of passing over them";
  EXPECT_EQ(a_published, 8u);
  EXPECT_EQ(b_published, 8u) << "B sent nothing new while A held the first 8";
  EXPECT_EQ(followed["a"], 8);
  EXPECT_EQ(followed["b"], 8);
  const std::map<std::string, int> posts = transport->posts();
  EXPECT_EQ(posts.size(), 16u);
  for (const auto& [posted, times] : posts)
    EXPECT_EQ(times, 1) << posted << " was POSTed " << times << " times";
  EXPECT_EQ(server.executions_total(), 16);
  EXPECT_EQ(seeder->pending_invocations(), 16);  // each awaits its DELETE
}

}  // namespace
}  // namespace exactly::test
