// The invocation store's contract on each engine: rows round-trip, steps move once, also when two
// connections move the same row at the same time.
#include "client_contracts.hpp"

#include "client/src/invocation_store.hpp"

#include <future>
#include <thread>

namespace exactly::test {
namespace {

using client::invocation_state;

TEST_P(invocation_store_contract, steps_move_once_and_rows_round_trip) {
  client::invocation_store s(db());
  s.add({"r1", "billing", "http://h:1/x/r1",
         client::message{"f1", "follow", {{"exactly-request-id", "r1"}}, {{"k", 1}}}, 0},
        100);
  auto due = s.due(invocation_state::post_pending, 100, 10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].url, "http://h:1/x/r1");
  EXPECT_EQ(due[0].follow_up.id, "f1");
  EXPECT_EQ(due[0].follow_up.body["k"], 1);
  EXPECT_EQ(due[0].follow_up.headers["exactly-request-id"], "r1");

  s.retry_later("r1", 500, "POST failed");
  EXPECT_TRUE(s.due(invocation_state::post_pending, 499, 10).empty());
  EXPECT_EQ(s.due(invocation_state::post_pending, 500, 10)[0].attempts, 1);

  EXPECT_TRUE(s.move_if_in("r1", invocation_state::post_pending,
                           invocation_state::awaiting_follow_up, 600));
  // A second publisher that read the row before: its transition fails, so it queues nothing.
  EXPECT_FALSE(s.move_if_in("r1", invocation_state::post_pending,
                            invocation_state::awaiting_follow_up, 600));
  EXPECT_TRUE(s.due(invocation_state::post_pending, 1000, 10).empty());
  EXPECT_TRUE(s.move_if_in("r1", invocation_state::awaiting_follow_up,
                           invocation_state::delete_pending, 700));
  EXPECT_EQ(s.due(invocation_state::delete_pending, 700, 10)[0].attempts, 0);
  EXPECT_EQ(s.pending(), 1);
  s.remove("r1");
  EXPECT_EQ(s.pending(), 0);
}

// Two publishers move the same row at once, each in its own transaction: the second waits for
// the first (SQLite: its write lock; PostgreSQL under READ COMMITTED: the row lock, then the
// WHERE clause is checked again against the committed row) and moves nothing.
TEST_P(invocation_store_contract, a_concurrent_move_of_one_row_waits_and_then_fails) {
  client::invocation_store first(db());
  first.add({"r1", "billing", "http://h:1/x/r1", client::message{}, 0}, 100);
  auto other = tdb().another();
  client::invocation_store second(other->db());

  std::future<bool> second_moved;
  {
    database_transaction tx(db());
    ASSERT_TRUE(first.move_if_in("r1", invocation_state::post_pending,
                                 invocation_state::awaiting_follow_up, 200));
    second_moved = std::async(std::launch::async, [&] {
      database_transaction tx2(other->db());
      const bool ok = second.move_if_in("r1", invocation_state::post_pending,
                                        invocation_state::delete_pending, 300);
      tx2.commit();
      return ok;
    });
    EXPECT_EQ(second_moved.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
        << "the second mover did not wait for the first";
    tx.commit();
  }
  EXPECT_FALSE(second_moved.get());
  EXPECT_EQ(first.due(invocation_state::awaiting_follow_up, 1000, 10).size(), 1u);
  EXPECT_TRUE(first.due(invocation_state::delete_pending, 1000, 10).empty());
}

}  // namespace
}  // namespace exactly::test
