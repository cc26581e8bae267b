// The row counters by state on PostgreSQL (migration 8): the server's sessions count the rows
// they change in their COMMIT and the trigger skips them; it counts what other sessions change.
// Every way a request moves a row leaves the counters equal to the rows.
#include <echo_server.hpp>
#include <pg_cluster.hpp>
#include <row_counters.hpp>

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace exactly::test {
namespace {

class server_row_counts : public ::testing::Test {
 protected:
  server_row_counts() {
    co_.postgres = pg::options{test_cluster().fresh_schema()};
    co_.clock = [this] { return now_.load(); };
    c_.emplace(co_);
    register_echo_app(*c_);
  }
  // The id minted now, and the status of its request.
  std::string mint() { return request_id::mint(now_.load()).to_string(); }
  unsigned send(verb v, const std::string& id) {
    const bool put = v == verb::put;
    return c_
        ->handle({v, echo_route, id, "alice", put ? "application/json" : "",
                  put ? R"({"status":200})" : ""})
        .status;
  }
  server::state_counts counts() { return c_->counts(); }

  std::atomic<std::int64_t> now_{request_id::mint().timestamp_ms()};
  server::connector_options co_;
  std::optional<server::connector> c_;
};

TEST_F(server_row_counts, the_server_counts_its_own_rows_and_the_trigger_those_of_others) {
  const std::string executed = mint(), staged_then_deleted = mint(), executed_then_deleted = mint();
  for (const std::string& id : {executed, staged_then_deleted, executed_then_deleted})
    ASSERT_EQ(send(verb::put, id), 201u);
  ASSERT_EQ(send(verb::post, executed), 200u);
  ASSERT_EQ(send(verb::post, executed_then_deleted), 200u);
  ASSERT_EQ(send(verb::delete_, staged_then_deleted), 204u);
  ASSERT_EQ(send(verb::delete_, executed_then_deleted), 204u);
  ASSERT_EQ(send(verb::delete_, mint()), 204u);  // an unknown id: a tombstone of its own
  EXPECT_EQ(counts().staged, 0);
  EXPECT_EQ(counts().executed, 1);
  EXPECT_EQ(counts().tombstone, 3);
  const database db = c_->storage(0);
  expect_counters_match_rows(db);
  pg::connection hand(*co_.postgres);  // another session: the trigger counts what it changes
  hand.exec(
      "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, state_since_ms)"
      " VALUES ('/by-hand/{id}', 'x', 'alice', 0, 1, 0)");
  hand.query("UPDATE exactly_interactions SET state = 3, tombstone_reason = 1 WHERE id = $1",
             executed);
  EXPECT_EQ(counts().staged, 1);
  EXPECT_EQ(counts().executed, 0);
  EXPECT_EQ(counts().tombstone, 4);
  expect_counters_match_rows(db);
}

// A request that meets a row past its staged TTL or response retention writes the tombstone the
// sweeper would have (and decides on it): the staged and the executed row each leave their
// counter once.
TEST_F(server_row_counts, a_request_that_meets_an_expiry_moves_the_row_once) {
  const std::string staged = mint(), executed = mint();
  ASSERT_EQ(send(verb::put, staged), 201u);
  ASSERT_EQ(send(verb::put, executed), 201u);
  ASSERT_EQ(send(verb::post, executed), 200u);
  now_ += co_.times.response_retention_ms + 1;  // past both
  send(verb::delete_, staged);
  send(verb::post, executed);
  EXPECT_EQ(counts().staged, 0);
  EXPECT_EQ(counts().executed, 0);
  EXPECT_EQ(counts().tombstone, 2);
  expect_counters_match_rows(c_->storage(0));
  send(verb::delete_, staged);  // a tombstone already: nothing moves
  EXPECT_EQ(counts().tombstone, 2);
  expect_counters_match_rows(c_->storage(0));
}

}  // namespace
}  // namespace exactly::test
