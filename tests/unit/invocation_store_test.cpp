#include "client/src/invocation_store.hpp"

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace exactly::client {
namespace {

TEST(invocation_store, steps_move_once_and_rows_round_trip) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("exactly-invocations-" + request_id::mint().to_string());
  std::filesystem::create_directories(dir);
  {
    sqlite::connection db((dir / "c.db").string());
    invocation_store s(db);
    s.add({"r1", "billing", "http://h:1/x/r1",
           message{"f1", "follow", {{"exactly-request-id", "r1"}}, {{"k", 1}}}, 0},
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
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace exactly::client
