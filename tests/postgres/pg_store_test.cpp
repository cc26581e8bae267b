// The storage contract on PostgreSQL, and what several connections to one database must not do
// to each other: decide on one id at once, deliver one outbox message twice, sweep a row a
// request holds.
#include "server/src/pg_store.hpp"
#include "pg_cluster.hpp"
#include "pg_round_trips.hpp"
#include "tests/support/interaction_store_contract.hpp"

#include <future>

namespace exactly::server {
namespace {

INSTANTIATE_TEST_SUITE_P(engines, interaction_store_contract,
                         ::testing::Values(factory([](const std::string&) {
                           return std::make_unique<pg_store>(
                               pg::options{test::test_cluster().fresh_schema()});
                         })),
                         [](const auto&) { return std::string("postgres"); });

// A request as the connector carries it out in a commit group: its savepoint, the lock on its id
// and its lookup go out together; what it writes goes with its RELEASE. A PUT of an unknown id
// reads the clock floor and its owner's load with the lookup: two round trips; a DELETE of a
// known id two.
TEST(pg_store_round_trips, a_put_and_a_delete_are_two_round_trips_each) {
  pg_store s({test::test_cluster().fresh_schema()});
  pg::transaction group(s.connection());
  const auto put = [&](const std::string& id) {
    auto tx = s.begin(true);
    s.lock_id("/r/{id}", id);
    const put_lookup l = s.find_for_put("/r/{id}", id, "alice");
    EXPECT_FALSE(l.known);
    s.insert_staged("/r/{id}", id, "alice", t0, t0, "text/plain", "b", "h");
    tx->commit();
  };
  const auto del = [&](const std::string& id) {
    auto tx = s.begin(true);
    s.lock_id("/r/{id}", id);
    EXPECT_TRUE(s.find_facts("/r/{id}", id));
    s.put_tombstone("/r/{id}", id, "alice", t0, tombstone_reason::deleted, t0, id_state::staged);
    tx->commit();
  };
  put("a");  // prepares the statements, in the round trips that use them first
  del("a");
  EXPECT_EQ(test::round_trips(s.connection(), [&] { put("b"); }), 2);
  EXPECT_EQ(test::round_trips(s.connection(), [&] { del("b"); }), 2);
  group.commit();
  auto tx = s.begin(true);
  EXPECT_EQ(s.find_facts("/r/{id}", "b")->state, id_state::tombstone);
  EXPECT_EQ(s.staged_of("alice").rows, 0);
}

class pg_store_shared : public ::testing::Test {
 protected:
  const std::string conninfo = test::test_cluster().fresh_schema();
  pg_store a{{conninfo}};
  pg_store b{{conninfo}};
};

TEST_F(pg_store_shared, a_second_connection_decides_on_an_id_only_after_the_first_committed) {
  auto tx = a.begin(true);
  a.lock_id("/r/{id}", "x");
  ASSERT_FALSE(a.find_facts("/r/{id}", "x"));
  // b asks for the same id while a holds it: b's lookup must wait and then see a's row.
  auto seen = std::async(std::launch::async, [&] {
    auto tb = b.begin(true);
    b.lock_id("/r/{id}", "x");
    return b.find_facts("/r/{id}", "x");
  });
  EXPECT_EQ(seen.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  a.insert_staged("/r/{id}", "x", "alice", t0, t0, "text/plain", "body", "h");
  tx->commit();
  const auto facts = seen.get();
  ASSERT_TRUE(facts.has_value());  // without the lock b would have found nothing and staged too
  EXPECT_EQ(facts->state, id_state::staged);
}

TEST_F(pg_store_shared, an_outbox_message_held_by_one_connection_is_skipped_by_the_other) {
  {
    auto tx = a.begin(true);
    a.outbox_add("m", "{}", "src", t0);
    tx->commit();
  }
  auto tx = a.begin(true);
  const auto due = a.outbox_due(t0, 10, std::numeric_limits<std::int64_t>::max());
  ASSERT_EQ(due.size(), 1u);
  ASSERT_TRUE(a.outbox_claim(due[0].seq, t0));
  {
    auto tb = b.begin(true);
    EXPECT_FALSE(b.outbox_claim(due[0].seq, t0));  // held: skipped, not waited for
  }
  a.outbox_remove(due[0].seq);
  tx->commit();
  auto tb = b.begin(true);
  EXPECT_FALSE(b.outbox_claim(due[0].seq, t0));  // gone
  EXPECT_EQ(b.outbox_pending(), 0);
}

TEST_F(pg_store_shared, the_sweeper_skips_a_row_a_request_holds_and_sweeps_it_later) {
  const timing t{};
  {
    auto tx = a.begin(true);
    a.insert_staged("/r/{id}", "x", "alice", t0, t0, "text/plain", "body", "h");
    tx->commit();
  }
  auto request = a.begin(true);
  a.lock_id("/r/{id}", "x");
  ASSERT_TRUE(a.find("/r/{id}", "x"));  // a POST deciding on it holds the row
  {
    auto tb = b.begin(true);
    EXPECT_EQ(b.sweep(t0 + t.staged_ttl_ms, t).expired_staged, 0);
    tb->commit();
  }
  a.mark_executed("/r/{id}", "x", {200, "text/plain", "ok"}, t0 + 1);
  request->commit();
  auto tb = b.begin(true);
  EXPECT_EQ(b.sweep(t0 + t.staged_ttl_ms, t).expired_staged, 0);  // executed: not staged now
  const auto rec = b.find("/r/{id}", "x");
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->state, id_state::executed);
  EXPECT_EQ(rec->response.body, "ok");
}

TEST(pg_store_start, missing_privileges_are_a_clear_error_at_start) {
  const std::string conninfo = test::test_cluster().fresh_schema();
  {
    pg::connection admin({test::test_cluster().conninfo()});
    admin.exec(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'exactly_reader') THEN"
        " CREATE ROLE exactly_reader LOGIN; END IF; END $$");
    // The role may see the schema but not create in it.
    const auto at = conninfo.find("search_path=") + 12;
    admin.exec("GRANT USAGE ON SCHEMA " + conninfo.substr(at, conninfo.find('\'', at) - at) +
               " TO exactly_reader");
  }
  std::string as_reader = conninfo;
  as_reader.replace(as_reader.find("user=postgres"), 13, "user=exactly_reader");
  try {
    pg_store s({as_reader});
    FAIL() << "a role without privileges created the tables";
  } catch (const pg::error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the server's tables"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("permission denied"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace exactly::server
