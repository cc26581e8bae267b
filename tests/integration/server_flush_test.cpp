// Which commits the server flushes, counted as fsyncs through a counting SQLite VFS (one
// process-wide default, so a program of its own): a PUT or a DELETE is answered without an fsync
// of its own, a POST only after one, and with server_options::flush_every_commit every commit
// has one. The commit groups themselves: a group is unflushed only if every member allowed it.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <metrics_text.hpp>
#include <requests.hpp>
#include <slow_sync_vfs.hpp>

#include "server/src/commit_group.hpp"
#include "server/src/storage_executor.hpp"

#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

namespace asio = boost::asio;
using server::commit_flush;

// The counting VFS (no delay) as the default before any database of this program is opened.
class counting_vfs : public ::testing::Environment {
 public:
  void SetUp() override { bench::install_slow_sync_vfs(std::chrono::microseconds(0)); }
};
[[maybe_unused]] const auto* const vfs = ::testing::AddGlobalTestEnvironment(new counting_vfs);

// What one request cost: fsyncs, commit groups, and of those the unflushed ones.
struct cost {
  std::uint64_t syncs = 0;
  std::int64_t groups = 0, unflushed = 0;
};

class server_flush : public ::testing::Test {
 protected:
  // Sends `method` for `id` and counts what it cost; expects `status`.
  cost counted(echo_server& s, const std::string& method, const std::string& id, unsigned status) {
    const std::uint64_t syncs = bench::slow_syncs();
    const std::int64_t groups = s.metric("exactly_commit_groups_total");
    const std::int64_t unflushed = s.metric("exactly_commit_groups_unflushed_total");
    http_client client(s.port());
    const std::string body = method == "PUT" ? R"({"status":200,"reply":"r"})" : "";
    EXPECT_EQ(client.request(method, path_of(id), body, alice).status, status) << method;
    return {bench::slow_syncs() - syncs, s.metric("exactly_commit_groups_total") - groups,
            s.metric("exactly_commit_groups_unflushed_total") - unflushed};
  }
  // Waits until the message the POST of `id` sent is delivered: its commit syncs too.
  static void delivered(echo_server& s, const std::string& id) {
    ASSERT_TRUE(eventually([&] { return s.deliveries(id) == 1 && s.outbox_pending() == 0; }));
  }
  // One whole interaction, so the WAL is past any restart (which syncs its header).
  void warm_up(echo_server& s) {
    const std::string id = request_id::mint(s.now_ms()).to_string();
    counted(s, "PUT", id, 201);
    counted(s, "POST", id, 200);
    delivered(s, id);
    counted(s, "DELETE", id, 204);
  }
};

TEST_F(server_flush, puts_and_deletes_are_answered_without_an_fsync_posts_after_one) {
  echo_server s;
  ASSERT_GE(s.metric("exactly_commit_groups_unflushed_total"), 0);
  warm_up(s);
  const std::string id = request_id::mint(s.now_ms()).to_string();
  const cost put = counted(s, "PUT", id, 201);
  EXPECT_EQ(put.syncs, 0u);
  EXPECT_EQ(put.groups, 1);
  EXPECT_EQ(put.unflushed, 1);
  const cost post = counted(s, "POST", id, 200);
  EXPECT_GE(post.syncs, 1u);
  EXPECT_EQ(post.groups, 1);
  EXPECT_EQ(post.unflushed, 0);
  delivered(s, id);
  const cost del = counted(s, "DELETE", id, 204);
  EXPECT_EQ(del.syncs, 0u);
  EXPECT_EQ(del.groups, 1);
  EXPECT_EQ(del.unflushed, 1);
  // The unflushed commits are committed: another connection reads them.
  sqlite::connection other(s.db_path());
  EXPECT_EQ(other.query_int64("SELECT count(*) FROM exactly_interactions WHERE state = 3"),
            2);  // tombstones: the warm-up's and this one
  EXPECT_EQ(s.executions(id), 1);
}

// Deciding that an unknown id is too old persists the time that decided it, flushed with the
// answer (for a PUT, a POST and a DELETE alike), so that a crash followed by a clock set back
// cannot make the server stage that id again; and an id within a minute of the window's edge is
// never committed unflushed.
TEST_F(server_flush, too_old_decisions_persist_their_time_flushed) {
  echo_server s;
  warm_up(s);
  const auto floor = [&] {
    sqlite::connection other(s.db_path());
    return other.query_int64("SELECT high_water_ms FROM exactly_clock").value_or(0);
  };
  constexpr std::int64_t hour = 3600 * 1000;
  for (const char* method : {"PUT", "POST", "DELETE"}) {
    const std::int64_t before = s.now_ms();
    const std::string old = request_id::mint(before - 2 * hour).to_string();
    const cost c = counted(s, method, old, std::string(method) == "DELETE" ? 204 : 410);
    EXPECT_GE(c.syncs, 1u) << method;
    EXPECT_EQ(c.unflushed, 0) << method;
    EXPECT_GE(floor(), before) << method;
  }
  // 59 minutes old: inside the window, but within a minute of its edge: staged, flushed.
  const std::string edge = request_id::mint(s.now_ms() - hour + 60'000 - 1000).to_string();
  const cost near = counted(s, "PUT", edge, 201);
  EXPECT_GE(near.syncs, 1u);
  EXPECT_EQ(near.unflushed, 0);
  // A fresh id's PUT stays unflushed.
  const cost fresh = counted(s, "PUT", request_id::mint(s.now_ms()).to_string(), 201);
  EXPECT_EQ(fresh.syncs, 0u);
  EXPECT_EQ(fresh.unflushed, 1);
}

// /metrics shows the commit groups' counts and times as they are at the scrape, though it shows
// the row figures read up to metrics_max_age ago (an hour here, so that no reading is refreshed
// between the two scrapes however slowly the test runs).
TEST_F(server_flush, metrics_show_the_groups_times_as_they_are_now) {
  echo_server s({.metrics_max_age = std::chrono::hours(1)});
  warm_up(s);
  http_client client(s.port());
  const auto scrape = [&] { return client.request("GET", "/metrics", "", {}).body; };
  const std::string unflushed = R"(exactly_commit_group_requests_timed_total{group="unflushed"})";
  const std::string flushed = R"(exactly_commit_group_requests_timed_total{group="flushed"})";
  const std::string before = scrape();
  const std::string id = request_id::mint(s.now_ms()).to_string();
  counted(s, "PUT", id, 201);
  counted(s, "POST", id, 200);
  const std::string after = scrape();
  ASSERT_GE(series_value(before, unflushed), 1);  // the warm-up's PUT and DELETE
  EXPECT_EQ(series_value(after, unflushed), series_value(before, unflushed) + 1);
  EXPECT_GE(series_value(after, flushed), series_value(before, flushed) + 1);
  for (const char* kind : {"flushed", "unflushed"}) {
    const std::string group = std::string("{group=\"") + kind + '"';
    const std::string answered =
        "exactly_commit_group_request_seconds_total" + group + ",step=\"answered\"}";
    EXPECT_GT(series_value(after, answered), series_value(before, answered)) << kind;
    EXPECT_GT(series_value(after, "exactly_commit_group_commit_seconds_total" + group + "}"),
              series_value(before, "exactly_commit_group_commit_seconds_total" + group + "}"))
        << kind;
  }
}

TEST_F(server_flush, flush_every_commit_flushes_puts_and_deletes_too) {
  echo_server s({.flush_every_commit = true});
  warm_up(s);
  const std::string id = request_id::mint(s.now_ms()).to_string();
  const cost put = counted(s, "PUT", id, 201);
  EXPECT_GE(put.syncs, 1u);
  EXPECT_EQ(put.groups, 1);
  const cost post = counted(s, "POST", id, 200);
  EXPECT_GE(post.syncs, 1u);
  delivered(s, id);
  const cost del = counted(s, "DELETE", id, 204);
  EXPECT_GE(del.syncs, 1u);
  EXPECT_EQ(del.groups, 1);
  EXPECT_EQ(s.metric("exactly_commit_groups_unflushed_total"), 0);
  EXPECT_GE(s.metric("exactly_commit_groups_total"), 6);
}

// commit_groups on a SQLite file in WAL mode at synchronous=FULL, as the server opens it.
class flushed_groups : public ::testing::Test {
 protected:
  flushed_groups() : path_((dir_.path() / "g.db").string()), db_(path_) {
    db_.exec("CREATE TABLE t (v INTEGER)");
    db_.exec("INSERT INTO t VALUES (0)");  // may restart the WAL, which syncs its header
  }

  // Queues one member per entry before the storage loop runs, as concurrent arrivals do (one
  // group when grouped); `between`, if set, runs once they are all queued, inside the group.
  // Returns the fsyncs the whole run took.
  std::uint64_t run_group(server::commit_groups& g, const std::vector<commit_flush>& members,
                          std::function<void()> between = {}) {
    const std::uint64_t before = bench::slow_syncs();
    for (const commit_flush f : members) {
      asio::co_spawn(
          io_,
          [&, f]() -> asio::awaitable<void> {
            const auto answer = co_await g.run(
                [&] {
                  db_.exec("INSERT INTO t VALUES (1)");
                  return 1;
                },
                true, f);
            answered_ += answer.value_or(0);
          },
          asio::detached);
    }
    if (between)
      asio::post(io_, between);
    io_.run();
    io_.restart();
    return bench::slow_syncs() - before;
  }
  std::int64_t rows() {
    sqlite::connection other(path_);
    return other.query_int64("SELECT count(*) FROM t").value_or(-1);
  }

  temp_dir dir_;
  std::string path_;
  sqlite::connection db_;
  asio::io_context io_;
  int answered_ = 0;
};

TEST_F(flushed_groups, a_group_is_unflushed_only_if_it_begins_with_and_holds_only_deferring_ones) {
  server::commit_groups g(io_, db_, true);
  EXPECT_EQ(run_group(g, {commit_flush::may_defer, commit_flush::may_defer}), 0u);
  EXPECT_EQ(g.stats().groups, 1);
  EXPECT_EQ(g.stats().unflushed, 1);
  EXPECT_EQ(rows(), 3);  // committed, if not yet on disk

  // A PUT, then a POST: the POST never joins the PUT's unflushed group (SQLite chooses at BEGIN);
  // it commits that group and begins a flushed one.
  EXPECT_GE(run_group(g, {commit_flush::may_defer, commit_flush::required}), 1u);
  EXPECT_EQ(g.stats().groups, 3);
  EXPECT_EQ(g.stats().unflushed, 2);
  // A POST, then a PUT: one flushed group.
  EXPECT_GE(run_group(g, {commit_flush::required, commit_flush::may_defer}), 1u);
  EXPECT_EQ(g.stats().groups, 4);
  EXPECT_EQ(g.stats().unflushed, 2);

  // Other work (the sweeper) first commits an open unflushed group; what it writes is flushed.
  EXPECT_GE(run_group(g, {commit_flush::may_defer},
                      [&] {
                        g.require_flush();
                        db_.exec("INSERT INTO t VALUES (1)");
                      }),
            1u);
  EXPECT_EQ(g.stats().groups, 5);
  EXPECT_EQ(g.stats().unflushed, 3);
  EXPECT_EQ(g.stats().requests, 7);
  EXPECT_EQ(answered_, 7);
  EXPECT_EQ(rows(), 9);
  EXPECT_EQ(db_.query_int64("PRAGMA synchronous"), 2);  // FULL again between groups
}

TEST_F(flushed_groups, ungrouped_requests_are_unflushed_alone_too) {
  server::commit_groups g(io_, db_, false);
  EXPECT_EQ(run_group(g, {commit_flush::may_defer, commit_flush::may_defer}), 0u);
  EXPECT_GE(run_group(g, {commit_flush::required}), 1u);
  EXPECT_EQ(g.stats().groups, 3);
  EXPECT_EQ(g.stats().unflushed, 2);
  EXPECT_EQ(rows(), 4);
}

TEST_F(flushed_groups, flush_every_commit_flushes_every_group) {
  server::commit_groups g(io_, db_, true, /*flush_every_commit=*/true);
  EXPECT_GE(run_group(g, {commit_flush::may_defer, commit_flush::may_defer}), 1u);
  EXPECT_GE(run_group(g, {commit_flush::may_defer}), 1u);
  EXPECT_EQ(g.stats().groups, 2);
  EXPECT_EQ(g.stats().unflushed, 0);
  EXPECT_EQ(rows(), 4);
}

TEST_F(flushed_groups, storage_work_behind_an_open_unflushed_group_commits_it_then_is_flushed) {
  // A PUT's group, then a storage_executor::run() queued behind it (as a metrics scrape or the
  // test control's sweep would be): it commits the PUT's unflushed group first, then writes
  // flushed.
  server::storage_executor storage(db_, true);
  int ran = 0;
  auto put = [&]() -> asio::awaitable<void> {
    const auto [failure, answer] = co_await storage.run_in_commit_group(
        [&] {
          db_.exec("INSERT INTO t VALUES (1)");
          return 1;
        },
        true, commit_flush::may_defer);
    answered_ += answer.value_or(0);
  };
  auto other = [&]() -> asio::awaitable<void> {
    ran += co_await storage.run([&] {
      db_.exec("INSERT INTO t VALUES (1)");
      return 1;
    });
  };
  const std::uint64_t before = bench::slow_syncs();
  asio::co_spawn(io_, put(), asio::detached);
  asio::co_spawn(io_, other(), asio::detached);
  io_.poll();  // both queued on the storage thread, which has not started
  storage.start();
  io_.run();
  storage.stop([] {});
  io_.restart();
  io_.run();  // whatever completed as the storage thread ended
  EXPECT_EQ(answered_, 1);
  EXPECT_EQ(ran, 1);
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  EXPECT_EQ(storage.group_counts().groups, 1);
  EXPECT_EQ(storage.group_counts().unflushed, 1);
  EXPECT_EQ(rows(), 3);
}

TEST_F(flushed_groups, each_kind_of_group_keeps_where_its_requests_time_went) {
  // Two PUTs and three POSTs handed to a storage thread that starts 20 ms later; each runs 5 ms.
  // The PUTs' unflushed group, committed when the first POST joins; then the POSTs' flushed one.
  server::storage_executor storage(db_, true);
  const auto member = [&](commit_flush f) -> asio::awaitable<void> {
    const auto [failure, answer] = co_await storage.run_in_commit_group(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          db_.exec("INSERT INTO t VALUES (1)");
          return 1;
        },
        true, f);
    answered_ += answer.value_or(0);
  };
  for (const commit_flush f :
       {commit_flush::may_defer, commit_flush::may_defer, commit_flush::required,
        commit_flush::required, commit_flush::required})
    asio::co_spawn(io_, member(f), asio::detached);
  io_.poll();  // all five handed over
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  storage.start();
  io_.run();
  storage.stop([] {});
  ASSERT_EQ(answered_, 5);

  const server::group_stats st = storage.group_counts();
  const server::group_times& un = st.unflushed_times;
  const server::group_times& fl = st.flushed_times;
  EXPECT_EQ(st.groups, 2);
  EXPECT_EQ(st.unflushed, 1);
  EXPECT_EQ(un.requests, 2);
  EXPECT_EQ(fl.requests, 3);
  // Each waited the 20 ms and for the members ahead of it: a PUT for the other one's 5 ms.
  EXPECT_GE(un.waiting_us, 2 * 20'000 + 5'000);
  EXPECT_GE(un.running_us, 2 * 5'000);
  // Committed once both had run: 30 ms each at least; answered no sooner.
  EXPECT_GE(un.committed_us, 2 * 30'000);
  EXPECT_GE(un.committed_us, un.waiting_us + un.running_us);
  EXPECT_GE(un.answered_us, un.committed_us);
  // A POST waited for both PUTs (and their COMMIT), and for the POSTs ahead of it.
  EXPECT_GE(fl.waiting_us, 3 * 30'000 + 5'000 + 10'000);
  EXPECT_GE(fl.running_us, 3 * 5'000);
  EXPECT_GE(fl.committed_us, 3 * (30'000 + 15'000));
  EXPECT_GE(fl.committed_us, fl.waiting_us + fl.running_us);
  EXPECT_GE(fl.answered_us, fl.committed_us);
  EXPECT_GT(fl.commit_us, 0);
  EXPECT_GT(un.commit_us, 0);
}

}  // namespace
}  // namespace exactly::test
