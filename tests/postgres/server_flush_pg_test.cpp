// Which commits the server flushes on PostgreSQL: PUT and DELETE groups commit with
// synchronous_commit off for that COMMIT, POST groups synchronously, every one with
// server_options::flush_every_commit; and a commit group is unflushed only if all its members
// allowed it.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include "pg_cluster.hpp"
#include "server/src/commit_group.hpp"

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace exactly::test {
namespace {

namespace asio = boost::asio;
using server::commit_flush;

// Commit groups and unflushed groups a request of `method` on `id` added; expects `status`.
std::pair<std::int64_t, std::int64_t> groups_of(echo_server& s, const std::string& method,
                                                const std::string& id, unsigned status) {
  const std::int64_t groups = s.metric("exactly_commit_groups_total");
  const std::int64_t unflushed = s.metric("exactly_commit_groups_unflushed_total");
  http_client client(s.port());
  const std::string body = method == "PUT" ? R"({"status":200,"reply":"r"})" : "";
  EXPECT_EQ(client.request(method, path_of(id), body, alice).status, status) << method;
  return {s.metric("exactly_commit_groups_total") - groups,
          s.metric("exactly_commit_groups_unflushed_total") - unflushed};
}

// PUT, POST, the POST's message delivered (its own flushed commit, outside any group), DELETE:
// the groups and unflushed groups of each.
std::vector<std::pair<std::int64_t, std::int64_t>> lifecycle(echo_server& s) {
  const std::string id = request_id::mint(s.now_ms()).to_string();
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  out.push_back(groups_of(s, "PUT", id, 201));
  out.push_back(groups_of(s, "POST", id, 200));
  EXPECT_TRUE(eventually([&] { return s.deliveries(id) == 1 && s.outbox_pending() == 0; }));
  out.push_back(groups_of(s, "DELETE", id, 204));
  EXPECT_EQ(s.executions(id), 1);
  return out;
}

using groups = std::vector<std::pair<std::int64_t, std::int64_t>>;

TEST(server_flush_postgres, put_and_delete_groups_are_unflushed_post_groups_flushed) {
  echo_server_config cfg;
  cfg.postgres = test_cluster().fresh_schema();
  echo_server s(cfg);
  EXPECT_EQ(lifecycle(s), (groups{{1, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(lifecycle(s), (groups{{1, 1}, {1, 0}, {1, 1}}));
  // Committed, if not yet flushed: another connection reads both tombstones.
  pg::connection other(pg::options{cfg.postgres});
  EXPECT_EQ(other.query_int64("SELECT count(*) FROM exactly_interactions WHERE state = 3"), 2);
  EXPECT_EQ(other.query("SHOW synchronous_commit").text(0, 0), "on");
}

TEST(server_flush_postgres, flush_every_commit_leaves_none_unflushed) {
  echo_server_config cfg;
  cfg.postgres = test_cluster().fresh_schema();
  cfg.flush_every_commit = true;
  echo_server s(cfg);
  EXPECT_EQ(lifecycle(s), (groups{{1, 0}, {1, 0}, {1, 0}}));
  EXPECT_EQ(s.metric("exactly_commit_groups_unflushed_total"), 0);
}

TEST(commit_groups_postgres,
     a_group_is_unflushed_only_if_it_begins_with_and_holds_only_deferring_ones) {
  const std::string conninfo = test_cluster().fresh_schema();
  pg::connection db(pg::options{conninfo});
  db.exec("CREATE TABLE t (v INTEGER)");
  asio::io_context io;
  server::commit_groups g(io, database(db), true);
  int answered = 0;
  // Queues one member per entry before the loop runs: one group.
  auto run_group = [&](const std::vector<commit_flush>& members) {
    for (const commit_flush f : members) {
      asio::co_spawn(
          io,
          [&, f]() -> asio::awaitable<void> {
            const auto answer = co_await g.run(
                [&] {
                  db.exec("INSERT INTO t VALUES (1)");
                  return 1;
                },
                true, f);
            answered += answer.value_or(0);
          },
          asio::detached);
    }
    io.run();
    io.restart();
  };
  run_group({commit_flush::may_defer, commit_flush::may_defer});
  EXPECT_EQ(g.stats().groups, 1);
  EXPECT_EQ(g.stats().unflushed, 1);
  // A PUT, then a POST: the POST commits the PUT's unflushed group and begins a flushed one.
  run_group({commit_flush::may_defer, commit_flush::required});
  EXPECT_EQ(g.stats().groups, 3);
  EXPECT_EQ(g.stats().unflushed, 2);
  run_group({commit_flush::required, commit_flush::may_defer});  // a POST, then a PUT: flushed
  EXPECT_EQ(g.stats().groups, 4);
  EXPECT_EQ(g.stats().unflushed, 2);
  EXPECT_EQ(answered, 6);
  pg::connection other(pg::options{conninfo});
  EXPECT_EQ(other.query_int64("SELECT count(*) FROM t"), 6);
  EXPECT_EQ(db.query("SHOW synchronous_commit").text(0, 0), "on");  // SET LOCAL: that COMMIT only

  server::commit_groups every(io, database(db), true, /*flush_every_commit=*/true);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await every.run([&] { return db.execute("INSERT INTO t VALUES (2)"); }, true,
                           commit_flush::may_defer);
      },
      asio::detached);
  io.run();
  EXPECT_EQ(every.stats().groups, 1);
  EXPECT_EQ(every.stats().unflushed, 0);
}

}  // namespace
}  // namespace exactly::test
