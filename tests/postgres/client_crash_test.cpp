// The client crash matrix with the client on PostgreSQL: client-crash-driver --postgres=... is
// killed at each client step boundary, restarted on the same database and left to finish. Then,
// counted on the server (SQLite) and in PostgreSQL: each committed invoke executed once, each
// follow-up committed once, every id PUT DELETEd (the crashed attempt's orphans from the journal),
// nothing pending.
#include "client_test_db.hpp"
#include "pg_cluster.hpp"

#include <child_process.hpp>
#include <crash_case_name.hpp>
#include <echo_server.hpp>

#include <exactly/common/crash_point.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <ostream>

namespace exactly::test {
namespace {

constexpr int orders = 6;

std::int64_t server_count(const std::string& db, const std::string& sql) {
  sqlite::connection c(db);
  return c.query_int64(sql).value_or(0);
}

struct crash_case {
  const char* point;
  bool in_handler = false;        // each handler waits for its PUT (put_wait::in_handler)
  bool queued_follow_up = false;  // follow-ups queued to GET their responses
  bool put_never = false;         // batches commit with their PUTs under way (put_wait::never)
};

void PrintTo(const crash_case& c, std::ostream* os) {
  *os << c.point << (c.in_handler ? " (put in handler)" : "")
      << (c.put_never ? " (put never awaited)" : "")
      << (c.queued_follow_up ? " (follow-up queued)" : "");
}

class postgres_client_crash : public ::testing::TestWithParam<crash_case> {};

TEST_P(postgres_client_crash, finishes_exactly_once_after_a_crash) {
  const crash_case c = GetParam();
  temp_dir dir;
  const std::string server_db = (dir.path() / "server.db").string();
  const std::string conninfo = test_cluster().fresh_schema();
  echo_server_process server(server_db, 0);
  std::vector<std::string> driver = {EXACTLY_CLIENT_DRIVER, "--postgres=" + conninfo,
                                     std::to_string(server.port()), std::to_string(orders)};
  if (c.in_handler)
    driver.push_back("in-handler");
  if (c.put_never)
    driver.push_back("put-never");
  if (c.queued_follow_up)
    driver.push_back("queued-follow-up");
  {
    child_process crashed(driver, c.point);
    EXPECT_EQ(crashed.wait_exit(), crash_exit_code) << "never reached " << c.point;
  }
  {
    child_process restarted(driver);
    EXPECT_EQ(restarted.wait_exit(), 0);
  }
  EXPECT_EQ(server.terminate(), 0);

  EXPECT_EQ(server_count(server_db, "SELECT sum(n) FROM echo_executions"), orders);
  EXPECT_EQ(server_count(server_db, "SELECT max(n) FROM echo_executions"), 1);
  EXPECT_EQ(server_count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state <= 2"),
            0);
  const bool orphan = std::string(c.point) == "client.after_put_before_commit";
  const int orphans = orphan ? (c.in_handler ? 1 : orders) : 0;
  EXPECT_EQ(server_count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state > 2"),
            orders + orphans);
  auto client = open_pg_db(conninfo);
  const database db = client->db();
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM bills"), orders);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM results WHERE status = 200"), orders);
  EXPECT_EQ(query_int(db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_attempts"), 0);
}

INSTANTIATE_TEST_SUITE_P(
    points, postgres_client_crash,
    ::testing::Values(crash_case{"client.after_put_before_commit"},
                      crash_case{"client.after_commit_before_post_or_delete"},
                      crash_case{"client.after_post_before_follow_up"},
                      crash_case{"client.after_follow_up_before_commit"},
                      crash_case{"client.after_delete_before_done"},
                      crash_case{"client.after_put_before_commit", true},
                      crash_case{"client.after_commit_before_post_or_delete", true},
                      crash_case{"client.after_post_before_follow_up", true},
                      crash_case{"client.after_follow_up_before_commit", true},
                      crash_case{"client.after_delete_before_done", true},
                      crash_case{"client.after_get_before_commit", false, true},
                      crash_case{"client.after_get_before_commit", true, true},
                      crash_case{"client.after_put_before_commit", false, false, true},
                      crash_case{"client.after_commit_before_post_or_delete", false, false, true},
                      crash_case{"client.after_post_before_follow_up", false, false, true}),
    [](const auto& info) {
      return crash_case_name(info.param.point, info.param.in_handler, info.param.queued_follow_up,
                             info.param.put_never);
    });

}  // namespace
}  // namespace exactly::test
