// Which commits of the client runtime are flushed, counted as fsyncs of the client's database
// through the counting VFS of this program (server_flush_test.cpp installs it; the server runs in
// a process of its own, so its fsyncs are not counted): the handlers' batch and the POSTs'
// answers with their follow-ups are flushed, the DELETEs' completions are not (a lost one only
// repeats an idempotent DELETE).

#include <child_process.hpp>
#include <echo_server.hpp>
#include <slow_sync_vfs.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

TEST(client_flush, post_answers_are_flushed_delete_completions_are_not) {
  temp_dir dir;
  echo_server_process server((dir.path() / "server.db").string(), 0);
  sqlite::connection db((dir.path() / "client.db").string());  // synchronous=FULL
  db.exec("CREATE TABLE results (order_id TEXT PRIMARY KEY, status INTEGER)");
  client::endpoint ep("billing", db, {.transport = client::make_beast_transport()});
  const std::string url =
      "http://127.0.0.1:" + std::to_string(server.port()) + "/vectors/echo/{id}";
  ep.on("bill", [&url](client::handler_context& ctx) {
    const std::string order = ctx.incoming().body.at("order");
    ctx.invoke_http(url, R"({"status":200,"reply":")" + order + "\"}", "application/json",
                    {.type = "bill_result", .body = {{"order", order}}});
  });
  ep.on("bill_result", [](client::handler_context& ctx) {
    ctx.db()
        .prepare("INSERT INTO results VALUES (?, ?)")
        .bind(1, ctx.incoming().body.at("order").get<std::string>())
        .bind(2, static_cast<int>(ctx.response()->status))
        .run();
  });
  constexpr int n = 4;
  for (int i = 0; i < n; ++i)
    ep.send("billing", {.type = "bill", .body = {{"order", "o-" + std::to_string(i)}}});

  std::uint64_t before = bench::slow_syncs();
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));  // the handlers and their PUTs
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  before = bench::slow_syncs();
  EXPECT_EQ(ep.publish_due(), static_cast<std::size_t>(n));  // the POSTs and the follow-ups
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM results WHERE status = 200"), n);
  before = bench::slow_syncs();
  EXPECT_EQ(ep.publish_due(), static_cast<std::size_t>(n));  // the DELETEs
  EXPECT_EQ(bench::slow_syncs() - before, 0u);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);  // FULL again for what follows
}

}  // namespace
}  // namespace exactly::test
