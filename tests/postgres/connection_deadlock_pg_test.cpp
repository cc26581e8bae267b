// Route logic that locks rows of its own in crossing order, on two connections of one connector:
// PostgreSQL breaks the deadlock by failing one of the two transactions. That POST answers 503
// and nothing of its execution stays; the other commits; the refused one, sent again, executes
// once. Counted in the route's own table and in the rows it updates. A deadlock the logic
// swallowed answers 503 the same way.
#include <pg_cluster.hpp>

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

constexpr const char* transfer_route = "/transfer/{id}";

// Which account the logic locks first; it locks the other one second.
struct transfer {
  std::string first;
  std::string second;
};

server::parse_result<transfer> parse_transfer(const server::incoming_request& in) {
  if (in.body == "a-then-b")
    return transfer{"a", "b"};
  if (in.body == "b-then-a")
    return transfer{"b", "a"};
  return server::invalid_payload{"body must be a-then-b or b-then-a"};
}

TEST(storage_lanes_deadlock,
     crossing_locks_fail_one_post_with_503_and_it_runs_once_when_sent_again) {
  server::connector_options co;
  co.postgres = pg::options{test_cluster().fresh_schema()};
  co.postgres_connections = 2;
  co.max_staged_per_principal = 10;
  server::connector c(co);
  c.storage(0).exec(
      "CREATE TABLE accounts (name TEXT PRIMARY KEY, n BIGINT NOT NULL);"
      "INSERT INTO accounts VALUES ('a', 0), ('b', 0);"
      "CREATE TABLE transfers (id TEXT PRIMARY KEY)");
  // The first time, each execution waits after its first lock until both hold one.
  std::atomic<int> holding{0};
  c.route<transfer>(transfer_route, parse_transfer, [&](server::session<transfer>& s) {
    const std::string id = s.id().to_string();
    s.pg().execute("INSERT INTO transfers VALUES ($1)", id);
    s.pg().execute("UPDATE accounts SET n = n + 1 WHERE name = $1", s.payload().first);
    if (holding.fetch_add(1) < 2) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (holding.load() < 2 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    s.pg().execute("UPDATE accounts SET n = n + 1 WHERE name = $1", s.payload().second);
    return server::stored_response{200, "text/plain", "moved"};
  });

  const std::string ids[2] = {request_id::mint().to_string(), request_id::mint().to_string()};
  const char* bodies[2] = {"a-then-b", "b-then-a"};
  server::interaction_response answers[2];
  std::thread lanes[2];
  for (std::size_t i = 0; i < 2; ++i) {
    lanes[i] = std::thread([&, i] {
      c.use_connection_on_this_thread(i);
      const auto put =
          c.handle({verb::put, transfer_route, ids[i], "alice", "text/plain", bodies[i]});
      ASSERT_EQ(put.status, 201u) << put.body;
      answers[i] = c.handle({verb::post, transfer_route, ids[i], "alice", "", ""});
    });
  }
  for (std::thread& t : lanes)
    t.join();
  ASSERT_EQ(holding.load(), 2);  // both held their first lock at once: the locks crossed

  // One was chosen as the deadlock's victim: 503, its execution rolled back.
  const bool first_refused = answers[0].status == 503;
  const std::size_t refused = first_refused ? 0 : 1, done = 1 - refused;
  EXPECT_EQ(answers[refused].status, 503u) << answers[refused].body;
  EXPECT_EQ(answers[refused].problem, errc::storage_unavailable);
  EXPECT_EQ(answers[done].status, 200u) << answers[done].body;
  EXPECT_EQ(answers[done].outcome, "executed");
  database db = c.storage(0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM transfers"), 1);
  EXPECT_EQ(db.query_int64("SELECT sum(n) FROM accounts"), 2);

  // Sent again, the refused POST executes once; a third time it replays.
  const auto again = c.handle({verb::post, transfer_route, ids[refused], "alice", "", ""});
  EXPECT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(again.outcome, "executed");
  const auto replay = c.handle({verb::post, transfer_route, ids[refused], "alice", "", ""});
  EXPECT_EQ(replay.status, 200u);
  EXPECT_EQ(replay.outcome, "replayed");
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM transfers"), 2);
  EXPECT_EQ(db.query_int64("SELECT n FROM accounts WHERE name = 'a'"), 2);
  EXPECT_EQ(db.query_int64("SELECT n FROM accounts WHERE name = 'b'"), 2);
}

// Route logic that catches a deadlock without a savepoint of its own and returns as if nothing
// had happened: the transaction is aborted, so the POST's own writes fail, and they report the
// deadlock. The POST answers 503 with nothing of it kept, and runs once when sent again.
TEST(storage_lanes_deadlock, a_deadlock_the_logic_swallowed_answers_503_and_runs_once_later) {
  server::connector_options co;
  co.postgres = pg::options{test_cluster().fresh_schema()};
  server::connector c(co);
  c.storage(0).exec("CREATE TABLE transfers (id TEXT PRIMARY KEY)");
  int runs = 0;
  c.route<transfer>(transfer_route, parse_transfer, [&](server::session<transfer>& s) {
    if (++runs == 1) {
      try {
        s.pg().exec("DO $$ BEGIN RAISE EXCEPTION 'deadlock' USING ERRCODE = '40P01'; END $$");
      } catch (const pg::error&) {
        return server::stored_response{200, "text/plain", "moved"};  // as if it had not failed
      }
    }
    s.pg().execute("INSERT INTO transfers VALUES ($1)", s.id().to_string());
    return server::stored_response{200, "text/plain", "moved"};
  });
  const std::string id = request_id::mint().to_string();
  ASSERT_EQ(c.handle({verb::put, transfer_route, id, "alice", "text/plain", "a-then-b"}).status,
            201u);
  const auto refused = c.handle({verb::post, transfer_route, id, "alice", "", ""});
  EXPECT_EQ(refused.status, 503u) << refused.body;
  EXPECT_EQ(refused.problem, errc::storage_unavailable);
  const auto again = c.handle({verb::post, transfer_route, id, "alice", "", ""});
  EXPECT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(again.outcome, "executed");
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(c.storage(0).query_int64("SELECT count(*) FROM transfers"), 1);
}

}  // namespace
}  // namespace exactly::test
