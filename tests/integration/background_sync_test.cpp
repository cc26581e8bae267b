// The background sync (server_options::background_sync), with the counting VFS holding every
// fsync back until the test lets it end: a flushed group's answers, a GET that read it and the
// outbox message it sent wait for its sync, while the storage thread goes on and answers PUTs,
// DELETEs and GETs of other ids. Part of exactly_server_flush_tests (the VFS is the program's
// default).

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>
#include <slow_sync_vfs.hpp>

#include "server/src/commit_group.hpp"

#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <future>
#include <thread>

namespace exactly::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using server::commit_flush;

// Lets held syncs end when a test leaves early, so no thread waits at the gate for ever.
struct syncs_held {
  syncs_held() { bench::hold_syncs(); }
  ~syncs_held() { bench::release_syncs(); }
};

// `method` on `id` from a thread of its own; the status, or 0 if it failed.
std::future<unsigned> send_async(echo_server& s, std::string method, std::string id) {
  return std::async(std::launch::async, [&s, method, id] {
    http_client c(s.port());
    const std::string body = method == "PUT" ? R"({"status":200,"reply":"r"})" : "";
    try {
      return c.request(method, path_of(id), body, alice).status;
    } catch (const std::exception&) {
      return 0u;
    }
  });
}

bool answered(std::future<unsigned>& f, std::chrono::milliseconds within) {
  return f.wait_for(within) == std::future_status::ready;
}

// One whole interaction with syncs let through: the WAL file is open and synced once.
std::string warm_up(echo_server& s) {
  const std::string id = request_id::mint(s.now_ms()).to_string();
  for (const char* m : {"PUT", "POST"})
    EXPECT_NE(send_async(s, m, id).get(), 0u) << m;
  EXPECT_TRUE(eventually([&] { return s.deliveries(id) == 1; }));
  return id;
}

TEST(background_sync, puts_and_deletes_are_answered_while_a_posts_sync_has_not_ended) {
  echo_server s;
  const std::string synced = warm_up(s);
  const std::string id = request_id::mint(s.now_ms()).to_string();
  ASSERT_EQ(send_async(s, "PUT", id).get(), 201u);
  syncs_held held;
  auto post = send_async(s, "POST", id);
  // Its group is committed (the execution is visible) and its sync waits at the gate.
  ASSERT_TRUE(eventually([] { return bench::held_syncs() == 1; }));
  EXPECT_EQ(s.executions(id), 1);
  // The storage thread goes on: a PUT and a DELETE of another id are answered meanwhile.
  const std::string other = request_id::mint(s.now_ms()).to_string();
  auto put = send_async(s, "PUT", other);
  ASSERT_TRUE(answered(put, 10s)) << "a PUT waited for another request's fsync";
  EXPECT_EQ(put.get(), 201u);
  auto del = send_async(s, "DELETE", other);
  ASSERT_TRUE(answered(del, 10s)) << "a DELETE waited for another request's fsync";
  EXPECT_EQ(del.get(), 204u);
  // A GET of an id whose execution is on disk does not wait for another id's sync.
  auto get_synced = send_async(s, "GET", synced);
  ASSERT_TRUE(answered(get_synced, 10s)) << "a GET waited for another id's sync";
  EXPECT_EQ(get_synced.get(), 200u);
  // What depends on the execution waits: its answer, a GET that read it, a duplicate POST's
  // replay, and the message it sent.
  auto get = send_async(s, "GET", id);
  auto again = send_async(s, "POST", id);
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(answered(post, 0ms)) << "a POST was answered before its sync ended";
  EXPECT_FALSE(answered(get, 0ms)) << "a GET was answered before what it read was on disk";
  EXPECT_FALSE(answered(again, 0ms)) << "a replay was answered before its sync ended";
  EXPECT_EQ(s.deliveries(id), 0) << "a message went out before its execution was on disk";
  bench::release_syncs();
  EXPECT_EQ(post.get(), 200u);
  EXPECT_EQ(get.get(), 200u);
  EXPECT_EQ(again.get(), 200u);
  EXPECT_TRUE(eventually([&] { return s.deliveries(id) == 1; }));
  EXPECT_EQ(s.executions(id), 1);
}

TEST(background_sync, when_off_the_storage_thread_waits_for_each_flushed_commit) {
  echo_server s({.background_sync = false});
  warm_up(s);
  const std::string id = request_id::mint(s.now_ms()).to_string();
  ASSERT_EQ(send_async(s, "PUT", id).get(), 201u);
  syncs_held held;
  auto post = send_async(s, "POST", id);
  ASSERT_TRUE(eventually([] { return bench::held_syncs() == 1; }));
  // The COMMIT itself waits at the gate, and the storage thread with it.
  auto put = send_async(s, "PUT", request_id::mint(s.now_ms()).to_string());
  EXPECT_FALSE(answered(put, 300ms));
  EXPECT_FALSE(answered(post, 0ms));
  bench::release_syncs();
  EXPECT_EQ(post.get(), 200u);
  EXPECT_EQ(put.get(), 201u);
}

// A sync that fails is not tried again (the disk may have dropped what it had not written): from
// then on every answer that needs the disk is a 503, none hangs, and PUTs are still answered.
TEST(background_sync, a_failed_sync_answers_503_to_what_needs_the_disk_and_nothing_hangs) {
  echo_server s;
  warm_up(s);
  const std::string id = request_id::mint(s.now_ms()).to_string();
  ASSERT_EQ(send_async(s, "PUT", id).get(), 201u);
  struct failing {
    failing() { bench::fail_syncs(true); }
    ~failing() { bench::fail_syncs(false); }
  } fail;
  auto post = send_async(s, "POST", id);
  ASSERT_TRUE(answered(post, 10s));
  EXPECT_EQ(post.get(), 503u);
  auto get = send_async(s, "GET", id);  // its POST's commit was never known to be on disk
  ASSERT_TRUE(answered(get, 10s));
  EXPECT_EQ(get.get(), 503u);
  const std::string other = request_id::mint(s.now_ms()).to_string();
  EXPECT_EQ(send_async(s, "PUT", other).get(), 201u);
  bench::fail_syncs(false);
  auto later = send_async(s, "POST", other);  // a sync would succeed now: none is tried
  ASSERT_TRUE(answered(later, 10s));
  EXPECT_EQ(later.get(), 503u);
  EXPECT_EQ(s.deliveries(id), 0);
}

// The first sync runs on the storage thread; when it fails, no later one is tried either (a later
// fsync may succeed over pages the disk dropped, and the first commit would be lost with it).
TEST(background_sync, a_failed_first_sync_is_not_followed_by_answers_that_need_the_disk) {
  echo_server s;  // no flushed group yet: its first sync is the first POST's
  const std::string first = request_id::mint(s.now_ms()).to_string();
  ASSERT_EQ(send_async(s, "PUT", first).get(), 201u);
  {
    bench::fail_syncs(true);
    auto post = send_async(s, "POST", first);
    const bool in_time = answered(post, 10s);
    bench::fail_syncs(false);
    ASSERT_TRUE(in_time);
    EXPECT_EQ(post.get(), 503u);
  }
  const std::string next = request_id::mint(s.now_ms()).to_string();
  ASSERT_EQ(send_async(s, "PUT", next).get(), 201u);
  auto post = send_async(s, "POST", next);
  ASSERT_TRUE(answered(post, 10s));
  EXPECT_EQ(post.get(), 503u) << "a POST was answered after a failed sync";
  auto get = send_async(s, "GET", first);
  ASSERT_TRUE(answered(get, 10s));
  EXPECT_EQ(get.get(), 503u) << "a GET answered a commit whose sync failed";
}

// commit_groups itself, on the calling thread: a flushed group's members are answered only after
// the wal_syncer's sync, and an unflushed group committed after it is answered before.
TEST(background_sync, a_flushed_groups_members_wait_for_the_sync_a_later_put_does_not) {
  temp_dir dir;
  sqlite::connection db((dir.path() / "g.db").string());
  db.exec("CREATE TABLE t (v INTEGER)");
  asio::io_context io;
  server::commit_groups g(io, db, true, false, /*background_sync=*/true);
  ASSERT_NE(g.syncer(), nullptr);
  std::vector<int> order;
  const auto member = [&](int tag, commit_flush f) {
    asio::co_spawn(
        io,
        [&, tag, f]() -> asio::awaitable<void> {
          const auto r = co_await g.run(
              [&] {
                db.exec("INSERT INTO t VALUES (1)");
                return tag;
              },
              true, f);
          order.push_back(r.value_or(-tag));
        },
        asio::detached);
  };
  member(1, commit_flush::required);  // the first sync runs on this thread
  io.run();
  io.restart();
  ASSERT_EQ(order, std::vector<int>{1});
  const std::uint64_t background = g.syncer()->syncs();

  syncs_held held;
  member(2, commit_flush::required);
  io.poll();  // its group is committed; its sync waits at the gate
  ASSERT_TRUE(eventually([] { return bench::held_syncs() == 1; }));
  member(3, commit_flush::may_defer);
  io.poll();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));  // the later PUT first
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 3);
  bench::release_syncs();
  ASSERT_TRUE(eventually([&] {
    io.poll();
    return order.size() == 3;
  }));
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(g.syncer()->syncs(), background + 1);
  EXPECT_EQ(g.stats().groups, 3);
  EXPECT_EQ(g.stats().unflushed, 1);

  // Arriving together behind a POST, a PUT does not join the POST's group (whose answers wait
  // for its sync): that group commits first, the PUT's own after it, answered at once.
  io.restart();  // it ran out of work
  bench::hold_syncs();
  member(4, commit_flush::required);
  member(5, commit_flush::may_defer);
  io.poll();
  ASSERT_TRUE(eventually([] { return bench::held_syncs() == 1; }));
  EXPECT_EQ(order, (std::vector<int>{1, 3, 2, 5}));
  EXPECT_EQ(g.stats().groups, 5);
  EXPECT_EQ(g.stats().unflushed, 2);
  bench::release_syncs();
  ASSERT_TRUE(eventually([&] {
    io.poll();
    return order.size() == 5;
  }));
  EXPECT_EQ(order.back(), 4);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 5);

  // Work of the storage thread's own (the outbox dispatcher, the sweeper) queued while a flushed
  // group is open commits it first, so it reads only committed rows, each numbered for the waits
  // on its sync, and never runs inside that group.
  io.restart();
  bool in_group = true;
  std::uint64_t numbered = 0;
  member(6, commit_flush::required);
  asio::post(io, [&] {
    g.require_flush();
    in_group = db.in_transaction();
    numbered = g.syncer()->visible();
  });
  const std::uint64_t before = g.syncer()->visible();
  ASSERT_TRUE(eventually([&] {
    io.poll();
    return order.size() == 6;
  }));
  EXPECT_FALSE(in_group);
  EXPECT_EQ(numbered, before + 1);
  EXPECT_EQ(g.stats().groups, 6);
}

}  // namespace
}  // namespace exactly::test
