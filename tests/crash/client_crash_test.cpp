// The crash matrix: the client process is killed at each step boundary of the protocol (and the
// server between its commit and its reply), restarted on the same database, and left to finish.
// Then, counted in both databases: each committed invoke executed once, each follow-up committed
// once, nothing pending on the client, no executed rows left on the server.

#include <child_process.hpp>
#include <crash_case_name.hpp>
#include <echo_server.hpp>

#include <exactly/common/crash_point.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

constexpr int orders = 6;

std::int64_t count(const std::string& db, const std::string& sql) {
  sqlite::connection c(db);
  return c.query_int64(sql).value_or(0);
}

struct crash_case {
  const char* point;
  bool in_server;                 // the crash point is the server's
  bool in_handler = false;        // each handler waits for its PUT (put_wait::in_handler)
  bool queued_follow_up = false;  // follow-ups queued to GET their responses
  bool put_never = false;         // batches commit with their PUTs under way (put_wait::never)
};

class client_crash_matrix : public ::testing::TestWithParam<crash_case> {};

TEST_P(client_crash_matrix, finishes_exactly_once_after_a_crash) {
  const crash_case c = GetParam();
  temp_dir dir;
  const std::string server_db = (dir.path() / "server.db").string();
  const std::string client_db = (dir.path() / "client.db").string();
  auto server = std::make_unique<echo_server_process>(server_db, 0, c.in_server ? c.point : "");
  const std::uint16_t port = server->port();
  std::vector<std::string> driver = {EXACTLY_CLIENT_DRIVER, client_db, std::to_string(port),
                                     std::to_string(orders)};
  if (c.in_handler)
    driver.push_back("in-handler");
  if (c.put_never)
    driver.push_back("put-never");
  if (c.queued_follow_up)
    driver.push_back("queued-follow-up");
  if (c.in_server) {
    child_process client(driver);
    EXPECT_EQ(server->wait_exit(), crash_exit_code);  // died after its first execution commit
    server = std::make_unique<echo_server_process>(server_db, port);
    EXPECT_EQ(client.wait_exit(), 0);
  } else {
    child_process crashed(driver, c.point);
    EXPECT_EQ(crashed.wait_exit(), crash_exit_code) << "never reached " << c.point;
    child_process restarted(driver);
    EXPECT_EQ(restarted.wait_exit(), 0);
  }
  EXPECT_EQ(server->terminate(), 0);

  EXPECT_EQ(count(server_db, "SELECT sum(n) FROM echo_executions"), orders);
  EXPECT_EQ(count(server_db, "SELECT max(n) FROM echo_executions"), 1);
  EXPECT_EQ(count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state = 2"), 0);
  EXPECT_EQ(count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state = 1"), 0);
  // Every id ever PUT was DELETEd, the crashed attempt's orphan PUTs included (from the journal):
  // the whole batch's (all the orders, their PUTs in flight together), or, when each handler
  // waits for its PUT, the first handler's.
  const bool orphan = std::string(c.point) == "client.after_put_before_commit";
  const int orphans = orphan ? (c.in_handler ? 1 : orders) : 0;
  EXPECT_EQ(count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state > 2"),
            orders + orphans);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM bills"), orders);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM results WHERE status = 200"), orders);
  EXPECT_EQ(count(client_db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_error_queue"), 0);
}

INSTANTIATE_TEST_SUITE_P(
    points, client_crash_matrix,
    ::testing::Values(crash_case{"client.after_put_before_commit", false},
                      crash_case{"client.after_commit_before_post_or_delete", false},
                      crash_case{"server.after_commit_before_reply", true},
                      crash_case{"client.after_post_before_follow_up", false},
                      crash_case{"client.after_follow_up_before_commit", false},
                      crash_case{"client.after_delete_before_done", false},
                      crash_case{"client.after_put_before_commit", false, true},
                      crash_case{"client.after_commit_before_post_or_delete", false, true},
                      crash_case{"server.after_commit_before_reply", true, true},
                      crash_case{"client.after_post_before_follow_up", false, true},
                      crash_case{"client.after_follow_up_before_commit", false, true},
                      crash_case{"client.after_delete_before_done", false, true},
                      // Follow-ups queued, each GETting its response before it runs.
                      crash_case{"client.after_post_before_follow_up", false, false, true},
                      crash_case{"client.after_get_before_commit", false, false, true},
                      crash_case{"client.after_get_before_commit", false, true, true},
                      // Batches committed with their PUTs under way, which the POSTs may overtake.
                      crash_case{"client.after_put_before_commit", false, false, false, true},
                      crash_case{"client.after_commit_before_post_or_delete", false, false, false,
                                 true},
                      crash_case{"server.after_commit_before_reply", true, false, false, true},
                      crash_case{"client.after_post_before_follow_up", false, false, false, true}),
    [](const auto& info) {
      return crash_case_name(info.param.point, info.param.in_handler, info.param.queued_follow_up,
                             info.param.put_never);
    });

// The server is killed right after it answered a handler's PUT with 201, and its staged row is
// taken back before it restarts, as a power loss may take back a commit not yet flushed. The
// client's POST then meets 404 request-unknown: it stages the kept body again under the same id
// and POSTs again. The other handlers of the batch, whose PUTs met the dead server, run again.
TEST(client_crash, a_staged_row_the_server_lost_is_staged_again_and_executes_once) {
  temp_dir dir;
  const std::string server_db = (dir.path() / "server.db").string();
  const std::string client_db = (dir.path() / "client.db").string();
  auto server = std::make_unique<echo_server_process>(server_db, 0, "server.after_put_answered");
  const std::uint16_t port = server->port();
  child_process client({EXACTLY_CLIENT_DRIVER, client_db, std::to_string(port),
                        std::to_string(orders), "in-handler"});
  EXPECT_EQ(server->wait_exit(), crash_exit_code);  // died after its first 201
  std::string lost;
  {
    sqlite::connection s(server_db);
    auto& q = s.prepare("SELECT id FROM exactly_interactions WHERE state = 1");
    ASSERT_TRUE(q.step());
    lost = q.text(0);
    q.reset();
    s.exec("DELETE FROM exactly_interactions WHERE state = 1");
    ASSERT_EQ(s.changes(), 1);  // the row the 201 acknowledged, lost
  }
  server = std::make_unique<echo_server_process>(server_db, port);
  EXPECT_EQ(client.wait_exit(), 0);
  EXPECT_EQ(server->terminate(), 0);

  EXPECT_EQ(count(server_db, "SELECT sum(n) FROM echo_executions"), orders);
  EXPECT_EQ(count(server_db, "SELECT max(n) FROM echo_executions"), 1);
  // The lost id itself was staged again and executed: not abandoned for a fresh one.
  EXPECT_EQ(count(server_db, "SELECT n FROM echo_executions WHERE id = '" + lost + "'"), 1);
  EXPECT_EQ(count(server_db, "SELECT count(*) FROM exactly_interactions WHERE state < 3"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM bills"), orders);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM results WHERE status = 200"), orders);
  EXPECT_EQ(count(client_db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(count(client_db, "SELECT count(*) FROM exactly_error_queue"), 0);
}

}  // namespace
}  // namespace exactly::test
