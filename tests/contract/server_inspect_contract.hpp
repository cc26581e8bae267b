#pragma once
// The server inspection API (server/inspect.hpp), one suite for both engines: rows are written by
// the connector's own store on one connection and read, replayed and dropped through inspect on
// another, as exactly-admin does beside a running service. A test file includes it and
// instantiates server_inspect_contract with its engine's factory.

#include <exactly/common/digest.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/inspect.hpp>
#include "server/src/interaction_store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace exactly::server {
namespace {

// A fresh directory for one test's database, removed afterwards.
struct inspect_scratch_dir {
  inspect_scratch_dir() { std::filesystem::create_directories(path); }
  ~inspect_scratch_dir() { std::filesystem::remove_all(path); }
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("exactly-inspect-" + request_id::mint().to_string());
};

constexpr std::int64_t t0 = 1'000'000'000'000;

// The store the connector writes through, and the operator's own connection to the same database.
struct inspected {
  std::unique_ptr<interaction_store> store;
  std::unique_ptr<sqlite::connection> sqlite_conn;
  std::unique_ptr<pg::connection> pg_conn;
  database db() const { return sqlite_conn ? database(*sqlite_conn) : database(*pg_conn); }
};
using inspect_factory = std::function<inspected(const std::string& dir)>;

class server_inspect_contract : public ::testing::TestWithParam<inspect_factory> {
 protected:
  server_inspect_contract() : target_(GetParam()(dir_.path.string())) {}

  template <class F>
  void in_tx(F f) {
    auto tx = store().begin(true);
    f();
    tx->commit();
  }
  interaction_store& store() { return *target_.store; }
  database db() const { return target_.db(); }

  // Staged a (alice, /r), executed b (bob, /r, 402), tombstone c (alice, /s, deleted), 10 ms apart.
  void three_interactions() {
    const std::string body("b\0dy", 4);
    in_tx([&] {
      store().insert_staged("/r/{id}", "a", "alice", t0 - 1, t0, "text/plain", body, sha256(body));
      store().insert_staged("/r/{id}", "b", "bob", t0 - 2, t0 + 1, "application/json", "{}",
                            sha256("{}"));
      store().mark_executed("/r/{id}", "b", {402, "application/problem+json", "{\"x\":1}"},
                            t0 + 10);
      store().put_tombstone("/s/{id}", "c", "alice", t0 - 3, tombstone_reason::deleted, t0 + 20,
                            std::nullopt);
    });
  }

  inspect_scratch_dir dir_;
  inspected target_;
};

using inspect::state;

std::vector<std::string> ids(const std::vector<inspect::interaction_summary>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    out.push_back(r.id);
  return out;
}

TEST_P(server_inspect_contract, an_empty_server_database_has_the_schema_and_nothing_in_it) {
  EXPECT_TRUE(inspect::has_server_schema(db()));
  const auto c = inspect::counts(db());
  EXPECT_EQ(c.staged + c.executed + c.tombstone + c.outbox + c.dead_letters, 0);
  EXPECT_TRUE(inspect::list_interactions(db(), {}).empty());
  EXPECT_TRUE(inspect::list_outbox(db()).empty());
  EXPECT_TRUE(inspect::list_dead_letters(db()).empty());
  EXPECT_FALSE(inspect::show_interaction(db(), "/r/{id}", "a", t0));
  EXPECT_FALSE(inspect::show_dead_letter(db(), 1));
  EXPECT_EQ(inspect::replay_dead_letter(db(), 1), inspect::replay_result::not_found);
  EXPECT_FALSE(inspect::drop_dead_letter(db(), 1));
}

TEST_P(server_inspect_contract, interactions_are_listed_by_state_owner_route_and_age) {
  three_interactions();
  inspect::interaction_filter f;
  f.now_ms = t0 + 100;
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"c", "b", "a"}));
  f.oldest_first = true;
  const auto all = inspect::list_interactions(db(), f);
  ASSERT_EQ(ids(all), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(all[0].route, "/r/{id}");
  EXPECT_EQ(all[0].owner, "alice");
  EXPECT_EQ(all[0].st, state::staged);
  EXPECT_EQ(all[0].state_since_ms, t0);
  EXPECT_EQ(all[0].age_ms, 100);
  EXPECT_EQ(all[0].id_ms, t0 - 1);
  EXPECT_FALSE(all[0].response_status);
  EXPECT_FALSE(all[0].tombstone_reason);
  EXPECT_EQ(all[1].st, state::executed);
  EXPECT_EQ(all[1].response_status, 402u);
  EXPECT_EQ(all[2].st, state::tombstone);
  EXPECT_EQ(all[2].tombstone_reason, "deleted");

  f.only_state = state::executed;
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"b"}));
  f.only_state.reset();
  f.owner = "alice";
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"a", "c"}));
  f.route = "/s/{id}";
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"c"}));
  f.owner.reset();
  f.route.reset();
  f.older_than_ms = 90;  // entered their state at t0 + 10 or earlier
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"a", "b"}));
  f.older_than_ms.reset();
  f.limit = 1;
  EXPECT_EQ(ids(inspect::list_interactions(db(), f)), (std::vector<std::string>{"a"}));
  f.owner = "nobody";
  EXPECT_TRUE(inspect::list_interactions(db(), f).empty());

  const auto c = inspect::counts(db());
  EXPECT_EQ(c.staged, 1);
  EXPECT_EQ(c.executed, 1);
  EXPECT_EQ(c.tombstone, 1);
}

TEST_P(server_inspect_contract, one_interaction_is_shown_with_its_bodies_and_digest) {
  three_interactions();
  const auto a = inspect::show_interaction(db(), "/r/{id}", "a", t0 + 5);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->st, state::staged);
  EXPECT_EQ(a->age_ms, 5);
  EXPECT_EQ(a->request_content_type, "text/plain");
  EXPECT_EQ(a->request_body, std::string("b\0dy", 4));  // every byte, as it came
  EXPECT_EQ(a->request_sha256_hex, to_hex(sha256(std::string("b\0dy", 4))));
  EXPECT_FALSE(a->response_body);

  const auto b = inspect::show_interaction(db(), "/r/{id}", "b", t0 + 5);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->st, state::executed);
  EXPECT_EQ(b->response_status, 402u);
  EXPECT_EQ(b->response_content_type, "application/problem+json");
  EXPECT_EQ(b->response_body, "{\"x\":1}");
  EXPECT_EQ(b->request_sha256_hex, to_hex(sha256("{}")));

  const auto c = inspect::show_interaction(db(), "/s/{id}", "c", t0 + 5);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->tombstone_reason, "deleted");
  EXPECT_FALSE(c->request_body);
  EXPECT_FALSE(c->request_sha256_hex);
  EXPECT_FALSE(inspect::show_interaction(db(), "/s/{id}", "a", t0));
}

TEST_P(server_inspect_contract, the_outbox_and_dead_letters_are_listed_and_shown) {
  in_tx([&] {
    store().outbox_add("paid", R"({"n":1})", "/r/{id} a", t0);
    store().outbox_add("paid", R"({"n":2})", "/r/{id} b", t0 + 1);
    store().outbox_add("refund", R"({"n":3})", "/r/{id} c", t0 + 2);
  });
  const auto due = [&] {
    auto tx = store().begin(false);
    return store().outbox_due(t0 + 10, 10, std::numeric_limits<std::int64_t>::max());
  }();
  ASSERT_EQ(due.size(), 3u);
  in_tx([&] {
    store().outbox_retry_later(due[1].seq, t0 + 500, "handler threw: busy");
    store().outbox_dead_letter(due[2].seq, "no handler registered for message type refund",
                               t0 + 30);
  });

  const auto outbox = inspect::list_outbox(db());
  ASSERT_EQ(outbox.size(), 2u);
  EXPECT_EQ(outbox[0].seq, due[0].seq);
  EXPECT_EQ(outbox[0].attempts, 0);
  EXPECT_FALSE(outbox[0].last_error);
  EXPECT_EQ(outbox[1].type, "paid");
  EXPECT_EQ(outbox[1].source, "/r/{id} b");
  EXPECT_EQ(outbox[1].created_ms, t0 + 1);
  EXPECT_EQ(outbox[1].attempts, 1);
  EXPECT_EQ(outbox[1].next_attempt_ms, t0 + 500);
  EXPECT_EQ(outbox[1].last_error, "handler threw: busy");
  EXPECT_EQ(inspect::list_outbox(db(), 1).size(), 1u);

  const auto dead = inspect::list_dead_letters(db());
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].seq, due[2].seq);
  EXPECT_EQ(dead[0].type, "refund");
  EXPECT_EQ(dead[0].source, "/r/{id} c");
  EXPECT_EQ(dead[0].created_ms, t0 + 2);
  EXPECT_EQ(dead[0].attempts, 1);
  EXPECT_EQ(dead[0].error, "no handler registered for message type refund");
  EXPECT_EQ(dead[0].failed_ms, t0 + 30);
  const auto shown = inspect::show_dead_letter(db(), due[2].seq);
  ASSERT_TRUE(shown);
  EXPECT_EQ(shown->body, R"({"n":3})");
  EXPECT_EQ(shown->error, dead[0].error);

  const auto c = inspect::counts(db());
  EXPECT_EQ(c.outbox, 2);
  EXPECT_EQ(c.dead_letters, 1);
}

TEST_P(server_inspect_contract, a_replayed_dead_letter_is_due_again_and_a_dropped_one_is_gone) {
  in_tx([&] {
    store().outbox_add("refund", R"({"n":1})", "src 1", t0);
    store().outbox_add("refund", R"({"n":2})", "src 2", t0);
  });
  std::vector<outbox_message> due;
  {
    auto tx = store().begin(false);
    due = store().outbox_due(t0, 10, std::numeric_limits<std::int64_t>::max());
  }
  ASSERT_EQ(due.size(), 2u);
  in_tx([&] {
    store().outbox_retry_later(due[0].seq, t0 + 1, "first try");
    store().outbox_dead_letter(due[0].seq, "gave up", t0 + 2);
    store().outbox_dead_letter(due[1].seq, "gave up too", t0 + 2);
  });
  ASSERT_EQ(inspect::list_dead_letters(db()).size(), 2u);

  EXPECT_EQ(inspect::replay_dead_letter(db(), due[0].seq), inspect::replay_result::replayed);
  // Replayed again (a second operator): the outbox holds it, said so, nothing changed.
  EXPECT_EQ(inspect::replay_dead_letter(db(), due[0].seq),
            inspect::replay_result::already_in_outbox);
  const auto outbox = inspect::list_outbox(db());
  ASSERT_EQ(outbox.size(), 1u);
  EXPECT_EQ(outbox[0].seq, due[0].seq);
  EXPECT_EQ(outbox[0].attempts, 0);
  EXPECT_EQ(outbox[0].next_attempt_ms, 0);
  EXPECT_EQ(outbox[0].last_error, "gave up");
  EXPECT_EQ(outbox[0].created_ms, t0);
  // The connector's dispatcher sees it due now, with its body, and can deliver it.
  {
    auto tx = store().begin(true);
    const auto again = store().outbox_due(t0 + 3, 10, std::numeric_limits<std::int64_t>::max());
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].body, R"({"n":1})");
    EXPECT_EQ(again[0].attempts, 0);
    EXPECT_TRUE(store().outbox_claim(again[0].seq, t0 + 3));
    store().outbox_remove(again[0].seq);
    tx->commit();
  }

  EXPECT_TRUE(inspect::drop_dead_letter(db(), due[1].seq));
  EXPECT_FALSE(inspect::drop_dead_letter(db(), due[1].seq));
  EXPECT_TRUE(inspect::list_dead_letters(db()).empty());
  const auto c = inspect::counts(db());
  EXPECT_EQ(c.outbox, 0);
  EXPECT_EQ(c.dead_letters, 0);
  auto tx = store().begin(false);
  EXPECT_EQ(store().outbox_pending(), 0);
  EXPECT_EQ(store().dead_letter_count(), 0);
}

TEST_P(server_inspect_contract, a_dead_letter_whose_seq_is_in_the_outbox_again_is_left_alone) {
  in_tx([&] { store().outbox_add("refund", R"({"n":1})", "src", t0); });
  std::int64_t seq = 0;
  {
    auto tx = store().begin(false);
    seq = store().outbox_due(t0, 10, std::numeric_limits<std::int64_t>::max()).at(0).seq;
  }
  in_tx([&] { store().outbox_dead_letter(seq, "gave up", t0 + 1); });
  // Another replay already put it back (and a second dead letter of it was never removed).
  db().execute(
      "INSERT INTO exactly_server_outbox(seq, type, body, source, created_ms) VALUES (?, 'refund',"
      " '{}', 'src', 0)",
      seq);
  EXPECT_EQ(inspect::replay_dead_letter(db(), seq), inspect::replay_result::already_in_outbox);
  EXPECT_EQ(inspect::list_dead_letters(db()).size(), 1u);  // kept, nothing changed
  EXPECT_EQ(inspect::list_outbox(db()).size(), 1u);
  // Once delivered (gone from the outbox) and dropped, a replay finds nothing.
  db().execute("DELETE FROM exactly_server_outbox WHERE seq = ?", seq);
  ASSERT_TRUE(inspect::drop_dead_letter(db(), seq));
  EXPECT_EQ(inspect::replay_dead_letter(db(), seq), inspect::replay_result::not_found);
}

}  // namespace
}  // namespace exactly::server
