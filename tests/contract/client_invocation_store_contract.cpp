// The invocation store's contract on each engine: rows round-trip, steps move once, also when two
// connections move the same row at the same time.
#include "client_contracts.hpp"

#include "client/src/attempt_journal.hpp"
#include "client/src/invocation_store.hpp"

#include <algorithm>
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

// missing() names, in one query, the ids without a row: committed, or written by the caller's
// open transaction (a row rolled back is missing again).
TEST_P(invocation_store_contract, missing_names_the_ids_without_a_row) {
  client::invocation_store s(db());
  s.add({"r1", "billing", "http://h:1/x/r1", client::message{}, 0}, 100);
  s.add_cleanup("r2", "billing", "http://h:1/x/r2", 100);
  EXPECT_EQ(s.missing({"r1", "r2", "r3", "r\"4,"}), (std::vector<std::string>{"r3", "r\"4,"}));
  EXPECT_TRUE(s.missing({}).empty());
  {
    database_transaction tx(db());
    s.add({"r3", "billing", "http://h:1/x/r3", client::message{}, 0}, 100);
    EXPECT_TRUE(s.missing({"r3"}).empty());
  }
  EXPECT_EQ(s.missing({"r3"}), std::vector<std::string>{"r3"});
}

// The attempt journal keeps what it is given in one commit, any character of a URL included.
TEST_P(invocation_store_contract, the_journal_records_a_batch_and_reads_it_back) {
  auto journal = client::attempt_journal::of(db(), "");
  const std::vector<client::journal_entry> entries = {
      {"r1", "http://h:1/x/r1?a=1,b={2}"}, {"r2", R"(http://h:1/x/"r2"\)"}, {"r3", "http://h:1/x"}};
  journal.record("billing", entries, 100);
  journal.record("billing", {{"r1", "http://h:1/x/again"}}, 100);  // already there: kept as it was
  const auto back = journal.older_than("billing", 100, 10);
  ASSERT_EQ(back.size(), 3u);
  for (const client::journal_entry& e : entries) {
    const auto it = std::find_if(back.begin(), back.end(), [&](const client::journal_entry& b) {
      return b.request_id == e.request_id;
    });
    ASSERT_NE(it, back.end()) << e.request_id;
    EXPECT_EQ(it->url, e.url);
  }
  journal.forget(entries);
  EXPECT_TRUE(journal.older_than("billing", 100, 10).empty());
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

// claim_due() reads the due rows of each state asked, up to the limit per state, of one endpoint,
// each with the state it was read in. On PostgreSQL the rows stay claimed until the transaction
// ends: another connection's claim passes over them and takes the next due ones.
TEST_P(invocation_store_contract, a_claim_reads_each_state_in_turn_with_the_state_it_was_read_in) {
  client::invocation_store s(db());
  const auto add = [&](const char* id, const char* endpoint, std::int64_t at) {
    s.add({id, endpoint, std::string("http://h:1/x/") + id, client::message{"f", "follow", {}, {}},
           0, std::nullopt, std::string("body-") + id, "text/plain"},
          at);
  };
  add("p1", "billing", 100);
  add("p2", "billing", 110);
  add("p3", "billing", 120);
  add("later", "billing", 900);      // not due at 500
  add("shipping", "shipping", 100);  // another endpoint's
  add("r1", "billing", 100);
  ASSERT_TRUE(
      s.move_if_in("r1", invocation_state::post_pending, invocation_state::restage_pending, 100));
  add("a1", "billing", 100);
  ASSERT_TRUE(s.move_if_in("a1", invocation_state::post_pending,
                           invocation_state::awaiting_follow_up, 100));
  s.add_cleanup("d1", "billing", "http://h:1/x/d1", 100);
  const std::vector<invocation_state> published{invocation_state::post_pending,
                                                invocation_state::restage_pending,
                                                invocation_state::delete_pending};
  const auto ids = [](const auto& claimed) {
    std::vector<std::pair<invocation_state, std::string>> out;
    for (const auto& [state, row] : claimed)
      out.emplace_back(state, row.request_id);
    return out;
  };
  using seen = std::vector<std::pair<invocation_state, std::string>>;

  database_transaction tx(db());
  const auto claimed = s.claim_due("billing", published, 500, 2);
  EXPECT_EQ(ids(claimed), (seen{{invocation_state::post_pending, "p1"},
                                {invocation_state::post_pending, "p2"},
                                {invocation_state::restage_pending, "r1"},
                                {invocation_state::delete_pending, "d1"}}));
  ASSERT_EQ(claimed.size(), 4u);
  EXPECT_EQ(claimed[2].second.body, "body-r1");  // the kept body, to PUT again
  EXPECT_EQ(claimed[2].second.content_type, "text/plain");
  EXPECT_EQ(claimed[3].second.body, std::nullopt);
  if (db().kind() == engine::postgres) {
    auto other = tdb().another();
    client::invocation_store second(other->db());
    database_transaction tx2(other->db());
    EXPECT_EQ(ids(second.claim_due("billing", published, 500, 2)),
              (seen{{invocation_state::post_pending, "p3"}}));
  }
  tx.commit();
}

// What the client's API shows of a row: its state, failures, and the retention times the server
// stated (the PUT's given with the row or recorded later, the POST's recorded later).
TEST_P(invocation_store_contract, rows_show_their_state_and_the_retention_times_recorded) {
  client::invocation_store s(db());
  EXPECT_FALSE(s.find("r1").has_value());
  client::invocation_row given{"r1", "billing", "http://h:1/x/r1", client::message{}, 0};
  given.staged_until_ms = 86'400'000;
  s.add(given, 100);
  s.add({"r2", "billing", "http://h:1/x/r2", client::message{}, 0}, 100);
  auto r1 = s.find("r1");
  ASSERT_TRUE(r1.has_value());
  EXPECT_EQ(r1->request_id, "r1");
  EXPECT_EQ(r1->url, "http://h:1/x/r1");
  EXPECT_EQ(r1->state, "post_pending");
  EXPECT_EQ(r1->staged_until_ms, 86'400'000);
  EXPECT_EQ(r1->response_until_ms, std::nullopt);
  EXPECT_EQ(r1->last_error, "");
  auto r2 = s.find("r2");
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->staged_until_ms, std::nullopt);  // the PUT's answer did not say

  s.record_staged_until("r2", 90'000'000);
  s.retry_later("r1", 500, "POST failed: timeout");
  ASSERT_TRUE(s.move_if_in("r1", invocation_state::post_pending,
                           invocation_state::awaiting_follow_up, 600));
  s.record_response_until("r1", 604'800'000);
  r1 = s.find("r1");
  EXPECT_EQ(r1->state, "awaiting_follow_up");
  EXPECT_EQ(r1->attempts, 0);
  EXPECT_EQ(r1->last_error, "POST failed: timeout");
  EXPECT_EQ(r1->staged_until_ms, 86'400'000);
  EXPECT_EQ(r1->response_until_ms, 604'800'000);
  EXPECT_EQ(s.find("r2")->staged_until_ms, 90'000'000);
  EXPECT_EQ(s.find("r2")->response_until_ms, std::nullopt);

  s.add_cleanup("r3", "billing", "http://h:1/x/r3", 100);
  EXPECT_EQ(s.find("r3")->state, "delete_pending");
  s.remove("r1");
  EXPECT_FALSE(s.find("r1").has_value());
}

// A table written by a version without retention times is migrated: its rows stay, with none.
TEST_P(invocation_store_contract, a_table_of_schema_version_1_gains_the_retention_times) {
  db().exec(
      "CREATE TABLE IF NOT EXISTS exactly_schema_version ("
      " component TEXT PRIMARY KEY, version BIGINT NOT NULL);"
      "INSERT INTO exactly_schema_version(component, version)"
      " VALUES('exactly.client.invocations', 1);"
      "CREATE TABLE exactly_invocations ("
      " request_id TEXT PRIMARY KEY, endpoint TEXT NOT NULL, url TEXT NOT NULL,"
      " follow_up TEXT NOT NULL, state BIGINT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0,"
      " due_ms BIGINT NOT NULL, last_error TEXT, created_ms BIGINT NOT NULL);"
      "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
      " created_ms) VALUES('r0', 'billing', 'http://h:1/x/r0',"
      " '{\"id\":\"f\",\"type\":\"t\",\"headers\":{},\"body\":null}', 2, 5, 5);");
  client::invocation_store s(db());
  auto r0 = s.find("r0");
  ASSERT_TRUE(r0.has_value());
  EXPECT_EQ(r0->state, "awaiting_follow_up");
  EXPECT_EQ(r0->staged_until_ms, std::nullopt);
  EXPECT_EQ(r0->response_until_ms, std::nullopt);
  s.record_response_until("r0", 1'000);
  EXPECT_EQ(s.find("r0")->response_until_ms, 1'000);
  const auto due = s.due(invocation_state::awaiting_follow_up, 5, 10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].body, std::nullopt);  // written before bodies were kept: none to stage again
}

// The body and Content-Type an invocation PUT come back with its row, bytes for bytes (a NUL and
// an empty body included), through restage_pending and back; a cleanup row keeps none.
TEST_P(invocation_store_contract, the_kept_body_round_trips_through_restage_pending) {
  client::invocation_store s(db());
  const std::string binary("a\0b\xff\x00z", 6);
  s.add({"r1", "billing", "http://h:1/x/r1", client::message{"f1", "follow", {}, {}}, 0,
         std::nullopt, binary, "application/octet-stream"},
        100);
  s.add({"r2", "billing", "http://h:1/x/r2", client::message{"f2", "follow", {}, {}}, 0,
         std::nullopt, std::string(), ""},
        100);
  s.add_cleanup("r3", "billing", "http://h:1/x/r3", 100);
  auto due = s.due(invocation_state::post_pending, 100, 10);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].body, binary);
  EXPECT_EQ(due[0].content_type, "application/octet-stream");
  EXPECT_EQ(due[1].body, std::string());  // kept, and empty: not NULL
  EXPECT_EQ(due[1].content_type, "");
  EXPECT_EQ(s.due(invocation_state::delete_pending, 100, 10)[0].body, std::nullopt);

  ASSERT_TRUE(
      s.move_if_in("r1", invocation_state::post_pending, invocation_state::restage_pending, 200));
  EXPECT_EQ(s.find("r1")->state, "restage_pending");
  due = s.due(invocation_state::restage_pending, 200, 10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].body, binary);
  ASSERT_TRUE(
      s.move_if_in("r1", invocation_state::restage_pending, invocation_state::post_pending, 300));
  EXPECT_EQ(s.due(invocation_state::post_pending, 300, 10)[1].body, binary);
}

}  // namespace
}  // namespace exactly::test
