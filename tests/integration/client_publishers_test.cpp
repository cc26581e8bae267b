// The publishers of one runtime over SQLite, where due steps are read outside the write lock:
// each step is sent by one of them, counted by the requests that reached the transport.
#include <counting_transport.hpp>
#include <echo_server.hpp>

#include <exactly/client/runtime.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

TEST(client_publishers, the_workers_of_a_runtime_never_send_one_post_twice) {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 1000;
  echo_server server(cfg);
  const std::string url = echo_url(server.port());
  auto transport = counting_echo_transport(server.port());
  temp_dir dir;
  const std::string path = (dir.path() / "client.db").string();
  sqlite::connection conn(path);
  const database db(conn);
  conn.exec("CREATE TABLE billed (message_id TEXT NOT NULL)");
  client::endpoint outside("billing", db, {});
  const auto count = [&](const char* sql) { return conn.query_int64(sql).value_or(-1); };
  constexpr int n = 120;
  {
    database_transaction tx(db);
    for (int i = 0; i < n; ++i)
      client::send_in_transaction(db, "billing", {.id = std::to_string(i), .type = "bill"});
    tx.commit();
  }
  // Three workers, each handling and publishing in turn, in batches of 8: their publishing turns
  // overlap and read the same due steps.
  client::runtime rt(
      path, {},
      [&](sqlite::connection& wdb) {
        std::vector<std::unique_ptr<client::endpoint>> eps;
        eps.push_back(std::make_unique<client::endpoint>(
            "billing", wdb, client::endpoint_options{.transport = transport}));
        eps[0]->on("bill", [url](client::handler_context& ctx) {
          ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "billed"});
        });
        eps[0]->on("billed", [](client::handler_context& ctx) {
          ctx.db().prepare("INSERT INTO billed VALUES (?)").bind(1, ctx.incoming().id).run();
        });
        return eps;
      },
      {.workers = 3, .idle_poll = std::chrono::milliseconds(1), .batch = 8});
  rt.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((count("SELECT count(*) FROM billed") < n ||
          count("SELECT count(*) FROM exactly_invocations") > 0) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rt.stop();

  EXPECT_EQ(count("SELECT count(*) FROM billed"), n);
  EXPECT_EQ(count("SELECT count(DISTINCT message_id) FROM billed"), n);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.executions_total(), n);
  const std::map<std::string, int> posts = transport->posts();
  EXPECT_EQ(posts.size(), static_cast<std::size_t>(n));
  int twice = 0;
  for (const auto& [posted, times] : posts)
    twice += times > 1 ? 1 : 0;
  EXPECT_EQ(twice, 0) << "of " << posts.size() << " POSTed ids, " << twice
                      << " went out more than once";
}

}  // namespace
}  // namespace exactly::test
