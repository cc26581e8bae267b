// Kills the server process between commit and reply, and at random moments under load, then
// restarts it on the same database and counts executions: always exactly one per request.

#include <child_process.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/crash_point.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <thread>

namespace exactly::test {
namespace {

const std::vector<std::pair<std::string, std::string>> open_json = {
    {"Content-Type", "application/json"}};

// The database of one test: a SQLite file, or a fresh PostgreSQL schema when the suite runs
// with EXACTLY_TEST_ENGINE=postgres (the same tests, registered a second time).
struct test_database {
  temp_dir dir;
  std::string conninfo = echo_server_config::default_test_postgres();
  std::string sqlite_file = (dir.path() / "server.db").string();

  // An echo-server process over this database.
  std::unique_ptr<echo_server_process> start(std::uint16_t port,
                                             const std::string& crash_at = "") const {
    return std::make_unique<echo_server_process>(conninfo.empty() ? sqlite_file : conninfo, port,
                                                 crash_at, !conninfo.empty());
  }
  // The integer `sql` selects (0 for NULL), read on a connection of its own.
  std::int64_t count(const std::string& sql) const {
    if (conninfo.empty())
      return sqlite::connection(sqlite_file).query_int64(sql).value_or(0);
    return pg::connection({conninfo}).query_int64(sql).value_or(0);
  }
};

TEST(server_crash, killed_between_commit_and_reply_executes_once_and_replays) {
  const test_database db;
  const std::string id = request_id::mint().to_string();
  std::uint16_t port = 0;
  {
    const auto started = db.start(0, "server.after_commit_before_reply");
    echo_server_process& p = *started;
    port = p.port();
    http_client c(port);
    ASSERT_EQ(c.request("PUT", path_of(id), R"({"status":200,"reply":"r"})", open_json).status,
              201u);
    EXPECT_THROW(c.request("POST", path_of(id), "", open_json), boost::system::system_error);
    EXPECT_EQ(p.wait_exit(), crash_exit_code);  // it really died at that step
  }
  EXPECT_EQ(db.count("SELECT count(*) FROM echo_executions"), 1);  // committed before death

  const auto restarted = db.start(port);
  echo_server_process& p = *restarted;
  http_client c(p.port());
  const auto post = c.request("POST", path_of(id), "", open_json);
  EXPECT_EQ(post.status, 200u);
  EXPECT_EQ(post.header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(post.body, R"({"reply":"r"})");
  EXPECT_EQ(c.request("GET", path_of(id)).header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(c.request("DELETE", path_of(id)).status, 204u);
  // The message committed with the execution is delivered after the restart, once.
  for (int i = 0; i < 300 && c.request("GET", "/metrics").body.find("exactly_outbox_pending 0\n") ==
                                 std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(p.terminate(), 0);  // graceful shutdown on SIGTERM
  EXPECT_EQ(db.count("SELECT sum(n) FROM echo_executions"), 1);
  EXPECT_EQ(db.count("SELECT sum(n) FROM echo_deliveries"), 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM exactly_server_outbox"), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM exactly_interactions WHERE state <> 3"), 0);
}

// Clients drive full cycles while the server is SIGKILLed and restarted at random moments.
// Each client retries through every failure the way the client runtime does; at the end every
// id executed exactly once and nothing but tombstones is left.
TEST(server_crash, random_kills_under_load_never_execute_twice) {
  const test_database db;
  auto server = db.start(0);
  const std::uint16_t port = server->port();
  constexpr int workers = 4, per_worker = 100;
  std::atomic<int> completed{0};
  std::vector<std::string> ids;
  for (int i = 0; i < workers * per_worker; ++i)
    ids.push_back(request_id::mint().to_string());
  std::atomic<int> protocol_faults{0};

  auto retry = [](auto&& call) {
    for (;;) {
      try {
        return call();
      } catch (const boost::system::system_error&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      http_client c(port);
      for (int i = 0; i < per_worker; ++i) {
        const std::string& id = ids[w * per_worker + i];
        // PUT until staged (201/200), or already consumed by an earlier POST (410).
        const auto put = retry([&] {
          return c.request("PUT", path_of(id), R"({"status":200,"reply":"k"})", open_json);
        });
        if (put.status != 201 && put.status != 200 && put.status != 410)
          ++protocol_faults;
        auto post = retry([&] { return c.request("POST", path_of(id), "", open_json); });
        while (post.status >= 500) {
          post = retry([&] { return c.request("POST", path_of(id), "", open_json); });
        }
        if (!post.has_header("exactly-once-outcome"))
          ++protocol_faults;
        const auto del = retry([&] { return c.request("DELETE", path_of(id)); });
        if (del.status != 204)
          ++protocol_faults;
        ++completed;
      }
    });
  }
  int kills = 0;
  std::thread killer([&] {
    std::mt19937 rng(12345);
    for (int k = 1; k <= 4; ++k) {  // at about 20, 40, 60 and 80 % of the work, plus jitter
      const int milestone = k * workers * per_worker / 5 + static_cast<int>(rng() % 10);
      while (completed.load() < milestone)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      server->kill_hard();
      ++kills;
      server = db.start(port);
    }
  });
  for (auto& t : threads)
    t.join();
  killer.join();
  EXPECT_EQ(kills, 4);
  EXPECT_EQ(server->terminate(), 0);

  EXPECT_EQ(protocol_faults.load(), 0);
  EXPECT_EQ(db.count("SELECT count(*) FROM echo_executions"), workers * per_worker);
  EXPECT_EQ(db.count("SELECT max(n) FROM echo_executions"), 1);
  EXPECT_EQ(db.count("SELECT count(*) FROM exactly_interactions WHERE state <> 3"), 0);
}

}  // namespace
}  // namespace exactly::test
