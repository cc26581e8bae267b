#pragma once
// The storage contract of the connector, one suite for every engine: a test file includes it
// and instantiates interaction_store_contract with its engine's factory.

#include <exactly/common/request_id.hpp>
#include "server/src/interaction_store.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>

namespace exactly::server {
namespace {

using factory = std::function<std::unique_ptr<interaction_store>(const std::string& dir)>;

// A fresh directory for one test's database, removed afterwards.
struct scratch_dir {
  scratch_dir() { std::filesystem::create_directories(path); }
  ~scratch_dir() { std::filesystem::remove_all(path); }
  std::string db() const { return (path / "store.db").string(); }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("exactly-store-" + request_id::mint().to_string());
};

class interaction_store_contract : public ::testing::TestWithParam<factory> {
 protected:
  interaction_store_contract() { store_ = GetParam()(dir_.path.string()); }
  ~interaction_store_contract() override { store_.reset(); }
  template <class F>
  auto in_tx(F f) {
    auto tx = store_->begin(true);
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      tx->commit();
    } else {
      auto r = f();
      tx->commit();
      return r;
    }
  }

  scratch_dir dir_;
  std::unique_ptr<interaction_store> store_;
};

constexpr std::int64_t t0 = 1'000'000'000'000;
// Every outbox message, whatever its seq (outbox_due).
constexpr std::int64_t all = std::numeric_limits<std::int64_t>::max();

TEST_P(interaction_store_contract, stage_execute_tombstone) {
  in_tx([&] { store_->insert_staged("/r/{id}", "a", "alice", t0, t0, "text/plain", "body", "h"); });
  auto rec = in_tx([&] { return store_->find("/r/{id}", "a"); });
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->state, id_state::staged);
  EXPECT_EQ(rec->owner, "alice");
  EXPECT_EQ(rec->id_ms, t0);
  EXPECT_EQ(rec->request_body, "body");
  EXPECT_EQ(rec->request_sha256, "h");
  EXPECT_EQ(rec->request_content_type, "text/plain");
  EXPECT_EQ(in_tx([&] { return store_->count_staged("alice"); }), 1);
  EXPECT_FALSE(in_tx([&] { return store_->find("/other/{id}", "a"); }).has_value());
  const auto facts = in_tx([&] { return store_->find_facts("/r/{id}", "a"); });
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->state, id_state::staged);
  EXPECT_EQ(facts->owner, "alice");
  EXPECT_EQ(facts->request_sha256, "h");
  EXPECT_EQ(facts->request_content_type, "text/plain");
  EXPECT_FALSE(in_tx([&] { return store_->find_facts("/other/{id}", "a"); }).has_value());

  in_tx([&] { store_->mark_executed("/r/{id}", "a", {402, "application/json", "{}"}, t0 + 5); });
  rec = in_tx([&] { return store_->find("/r/{id}", "a"); });
  EXPECT_EQ(rec->state, id_state::executed);
  EXPECT_EQ(rec->state_since_ms, t0 + 5);
  EXPECT_EQ(rec->response.status, 402u);
  EXPECT_EQ(rec->response.body, "{}");
  EXPECT_EQ(in_tx([&] { return store_->count_staged("alice"); }), 0);

  in_tx([&] {
    store_->put_tombstone("/r/{id}", "a", "alice", t0, tombstone_reason::deleted, t0 + 9,
                          id_state::executed);
  });
  rec = in_tx([&] { return store_->find("/r/{id}", "a"); });
  EXPECT_EQ(rec->state, id_state::tombstone);
  EXPECT_EQ(rec->reason, tombstone_reason::deleted);
  EXPECT_EQ(rec->response.body, "");
  EXPECT_EQ(rec->request_body, "");
}

// Refused by the call or, at the latest, by the commit it goes with; the first response stays.
TEST_P(interaction_store_contract, executing_twice_is_refused) {
  in_tx([&] { store_->insert_staged("/r/{id}", "a", "alice", t0, t0, "", "", ""); });
  in_tx([&] { store_->mark_executed("/r/{id}", "a", {200, "text/plain", "first"}, t0); });
  EXPECT_ANY_THROW(in_tx([&] {
    store_->mark_executed("/r/{id}", "a", {201, "text/plain", "second"}, t0 + 1);
  }));
  EXPECT_ANY_THROW(in_tx([&] {
    store_->mark_executed("/r/{id}", "never", {200, "", ""}, t0 + 1);
  }));
  const auto rec = in_tx([&] { return store_->find("/r/{id}", "a"); });
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->response.status, 200u);
  EXPECT_EQ(rec->response.body, "first");
  EXPECT_EQ(rec->state_since_ms, t0);
  EXPECT_FALSE(in_tx([&] { return store_->find("/r/{id}", "never"); }));
}

TEST_P(interaction_store_contract, after_commit_hooks_run_once_the_outermost_commit_is_done) {
  int ran = 0;
  store_->after_commit([&] { ++ran; });  // no transaction: at once
  EXPECT_EQ(ran, 1);
  {
    auto tx = store_->begin(true);
    store_->after_commit([&] { ++ran; });
  }  // rolled back: dropped
  EXPECT_EQ(ran, 1);
  {
    auto outer = store_->begin(true);
    {
      auto inner = store_->begin(true);  // a savepoint, as a request in a commit group
      store_->after_commit([&] { ++ran; });
      inner->commit();
    }
    EXPECT_EQ(ran, 1) << "a hook waits for the outermost transaction";
    outer->commit();
  }
  EXPECT_EQ(ran, 2);
}

TEST_P(interaction_store_contract, uncommitted_work_is_invisible) {
  {
    auto tx = store_->begin(true);
    store_->insert_staged("/r/{id}", "a", "alice", t0, t0, "", "", "");
    store_->outbox_add("m", "{}", "src", t0);
  }  // rolled back
  EXPECT_FALSE(in_tx([&] { return store_->find("/r/{id}", "a"); }).has_value());
  EXPECT_EQ(in_tx([&] { return store_->outbox_pending(); }), 0);
}

TEST_P(interaction_store_contract, sweep_follows_the_retention_rules) {
  const timing t{};
  in_tx([&] {
    store_->insert_staged("/r/{id}", "staged", "alice", t0, t0, "", "", "");
    store_->insert_staged("/r/{id}", "done", "alice", t0, t0, "", "", "");
    store_->mark_executed("/r/{id}", "done", {}, t0);
    store_->put_tombstone("/r/{id}", "gone", "alice", t0, tombstone_reason::deleted, t0,
                          std::nullopt);
  });
  sweep_result r = in_tx([&] { return store_->sweep(t0 + 1000, t); });
  EXPECT_EQ(r.expired_staged + r.expired_responses + r.purged_tombstones, 0);

  r = in_tx([&] { return store_->sweep(t0 + t.staged_ttl_ms, t); });
  EXPECT_EQ(r.expired_staged, 1);
  EXPECT_EQ(r.purged_tombstones, 1);  // "gone": id and tombstone both older than the window
  EXPECT_EQ(in_tx([&] { return store_->find("/r/{id}", "staged"); })->reason,
            tombstone_reason::expired);
  EXPECT_EQ(in_tx([&] { return store_->find_facts("/r/{id}", "staged"); })->reason,
            tombstone_reason::expired);

  r = in_tx([&] { return store_->sweep(t0 + t.response_retention_ms, t); });
  EXPECT_EQ(r.expired_responses, 1);
  EXPECT_EQ(r.purged_tombstones, 1);  // "staged" tombstone aged out
  const state_counts c = in_tx([&] { return store_->counts(); });
  EXPECT_EQ(c.staged, 0);
  EXPECT_EQ(c.executed, 0);
  EXPECT_EQ(c.tombstone, 1);  // "done", tombstoned just now
}

TEST_P(interaction_store_contract, count_staged_follows_every_way_in_and_out) {
  const timing t{};
  auto staged = [&](const char* owner) {
    return in_tx([&] { return store_->count_staged(owner); });
  };
  in_tx([&] {
    for (const char* id : {"a", "b", "c", "d"})
      store_->insert_staged("/r/{id}", id, "alice", t0, t0, "", "", "");
    store_->insert_staged("/r/{id}", "e", "bob", t0, t0, "", "", "");
    store_->put_tombstone("/r/{id}", "unknown", "alice", t0, tombstone_reason::deleted, t0,
                          std::nullopt);
  });
  EXPECT_EQ(staged("alice"), 4);
  EXPECT_EQ(staged("bob"), 1);
  EXPECT_EQ(staged("carol"), 0);
  in_tx([&] { store_->mark_executed("/r/{id}", "a", {}, t0); });
  EXPECT_EQ(staged("alice"), 3);
  in_tx([&] {
    store_->put_tombstone("/r/{id}", "b", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
  });
  EXPECT_EQ(staged("alice"), 2);
  {
    auto tx = store_->begin(true);
    store_->put_tombstone("/r/{id}", "c", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
  }  // rolled back
  EXPECT_EQ(staged("alice"), 2);
  in_tx([&] { store_->sweep(t0 + t.staged_ttl_ms, t); });  // c and d expire, e too
  EXPECT_EQ(staged("alice"), 0);
  EXPECT_EQ(staged("bob"), 0);
}

// A tombstone of an id from far in the future (written before DELETE refused such ids) is purged
// once its own age has left the window; one within the skew waits for its id's time as before.
TEST_P(interaction_store_contract, sweep_purges_far_future_tombstones_by_their_age) {
  const timing t{};
  in_tx([&] {
    store_->put_tombstone("/r/{id}", "far", "alice", 8'000'000'000'000'000,
                          tombstone_reason::deleted, t0, std::nullopt);
    store_->put_tombstone("/r/{id}", "near", "alice", t0 + t.max_future_skew_ms,
                          tombstone_reason::deleted, t0, std::nullopt);
  });
  EXPECT_EQ(in_tx([&] { return store_->sweep(t0 + t.acceptance_window_ms, t); }).purged_tombstones,
            0);
  EXPECT_EQ(
      in_tx([&] { return store_->sweep(t0 + t.acceptance_window_ms + 1, t); }).purged_tombstones,
      1);
  EXPECT_FALSE(in_tx([&] { return store_->find_facts("/r/{id}", "far"); }).has_value());
  EXPECT_TRUE(in_tx([&] { return store_->find_facts("/r/{id}", "near"); }).has_value());
}

// The counters /metrics reads follow every way a row comes, changes state and goes, and what a
// rolled-back transaction did is not counted.
TEST_P(interaction_store_contract, row_counters_follow_every_change) {
  const timing t{};
  auto rows = [&] {
    return in_tx([&] {
      const state_counts c = store_->counts();
      return std::array<std::int64_t, 5>{c.staged, c.executed, c.tombstone,
                                         store_->outbox_pending(), store_->dead_letter_count()};
    });
  };
  using counts = std::array<std::int64_t, 5>;
  EXPECT_EQ(rows(), (counts{0, 0, 0, 0, 0}));
  in_tx([&] {
    for (const char* id : {"a", "b", "c", "d"})
      store_->insert_staged("/r/{id}", id, "alice", t0, t0, "", "", "");
    store_->put_tombstone("/r/{id}", "unknown", "alice", t0, tombstone_reason::deleted, t0,
                          std::nullopt);
    store_->outbox_add("m", "{}", "s", t0);
    store_->outbox_add("m", "{}", "s", t0);
  });
  EXPECT_EQ(rows(), (counts{4, 0, 1, 2, 0}));
  in_tx([&] { store_->mark_executed("/r/{id}", "a", {}, t0); });
  EXPECT_EQ(rows(), (counts{3, 1, 1, 2, 0}));
  in_tx([&] {
    store_->put_tombstone("/r/{id}", "b", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
    store_->put_tombstone("/r/{id}", "a", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::executed);
    store_->put_tombstone("/r/{id}", "unknown", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::tombstone);
  });
  EXPECT_EQ(rows(), (counts{2, 0, 3, 2, 0}));
  {
    auto tx = store_->begin(true);
    store_->put_tombstone("/r/{id}", "c", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
    store_->insert_staged("/r/{id}", "e", "alice", t0, t0, "", "", "");
    store_->outbox_add("m", "{}", "s", t0);
  }  // rolled back
  EXPECT_EQ(rows(), (counts{2, 0, 3, 2, 0}));
  const auto due = in_tx([&] { return store_->outbox_due(t0, 10, all); });
  ASSERT_EQ(due.size(), 2u);
  in_tx([&] {
    store_->outbox_dead_letter(due[0].seq, "gave up", t0);
    store_->outbox_remove(due[1].seq);
  });
  EXPECT_EQ(rows(), (counts{2, 0, 3, 0, 1}));
  in_tx([&] {  // executed so long ago that the sweep below expires its response
    store_->insert_staged("/r/{id}", "f", "alice", t0, t0, "", "", "");
    store_->mark_executed("/r/{id}", "f", {}, t0 + t.staged_ttl_ms - t.response_retention_ms);
  });
  EXPECT_EQ(rows(), (counts{2, 1, 3, 0, 1}));
  // c, d expire, and f's response; a, b, unknown are purged
  in_tx([&] { store_->sweep(t0 + t.staged_ttl_ms, t); });
  EXPECT_EQ(rows(), (counts{0, 0, 3, 0, 1}));
}

// The persisted high-water time only rises, and only with the transaction that raised it.
TEST_P(interaction_store_contract, clock_floor_only_rises_and_commits_with_its_transaction) {
  EXPECT_EQ(in_tx([&] { return store_->clock_floor(); }), 0);
  in_tx([&] { store_->raise_clock_floor(t0 + 50); });
  EXPECT_EQ(in_tx([&] { return store_->clock_floor(); }), t0 + 50);
  in_tx([&] { store_->raise_clock_floor(t0); });
  EXPECT_EQ(in_tx([&] { return store_->clock_floor(); }), t0 + 50);
  {
    auto tx = store_->begin(true);
    store_->raise_clock_floor(t0 + 90);
  }  // rolled back
  EXPECT_EQ(in_tx([&] { return store_->clock_floor(); }), t0 + 50);
}

// find_for_put answers as find_facts, clock_floor and staged_of would, in its transaction: what
// the transaction wrote before it (a staged row, the floor) included.
TEST_P(interaction_store_contract, find_for_put_answers_as_the_three_lookups) {
  in_tx([&] {
    store_->insert_staged("/r/{id}", "a", "alice", t0, t0, "text/plain", "four", "h");
    store_->raise_clock_floor(t0 + 20);
  });
  const put_lookup unknown = in_tx([&] {
    store_->insert_staged("/r/{id}", "b", "alice", t0, t0 + 5, "", "xy", "");
    store_->raise_clock_floor(t0 + 30);
    return store_->find_for_put("/r/{id}", "c", "alice");
  });
  EXPECT_FALSE(unknown.known);
  EXPECT_EQ(unknown.clock_floor, t0 + 30);
  EXPECT_EQ(unknown.load.rows, 2);
  EXPECT_EQ(unknown.load.bytes, 6);
  EXPECT_EQ(in_tx([&] { return store_->find_for_put("/r/{id}", "c", "bob"); }).load.rows, 0);
  const put_lookup known = in_tx([&] { return store_->find_for_put("/r/{id}", "a", "alice"); });
  ASSERT_TRUE(known.known);
  EXPECT_EQ(known.known->state, id_state::staged);
  EXPECT_EQ(known.known->owner, "alice");
  EXPECT_EQ(known.known->state_since_ms, t0);
  EXPECT_EQ(known.known->request_content_type, "text/plain");
  EXPECT_EQ(known.known->request_sha256, "h");
}

TEST_P(interaction_store_contract, staged_bytes_follow_every_way_in_and_out) {
  const timing t{};
  auto bytes = [&](const char* owner) {
    return in_tx([&] { return store_->staged_bytes(owner); });
  };
  const std::string utf8 = "\xc3\xa9t\xc3\xa9";  // 3 characters, 5 bytes
  const std::string with_nul("a\0b", 3);
  in_tx([&] {
    store_->insert_staged("/r/{id}", "a", "alice", t0, t0, "", std::string(1000, 'x'), "");
    store_->insert_staged("/r/{id}", "b", "alice", t0, t0, "", utf8, "");
    store_->insert_staged("/r/{id}", "c", "alice", t0, t0, "", with_nul, "");
    store_->insert_staged("/r/{id}", "d", "alice", t0, t0, "", "", "");
    store_->insert_staged("/r/{id}", "e", "bob", t0, t0, "", "12345678", "");
  });
  EXPECT_EQ(bytes("alice"), 1008);
  EXPECT_EQ(bytes("bob"), 8);
  EXPECT_EQ(bytes("carol"), 0);
  in_tx([&] { store_->mark_executed("/r/{id}", "a", {200, "text/plain", "ok"}, t0); });
  EXPECT_EQ(bytes("alice"), 8);
  in_tx([&] {
    store_->put_tombstone("/r/{id}", "b", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
  });
  EXPECT_EQ(bytes("alice"), 3);
  {
    auto tx = store_->begin(true);
    store_->put_tombstone("/r/{id}", "c", "alice", t0, tombstone_reason::deleted, t0,
                          id_state::staged);
  }  // rolled back
  EXPECT_EQ(bytes("alice"), 3);
  in_tx([&] { store_->sweep(t0 + t.staged_ttl_ms, t); });  // c and d expire, e too
  EXPECT_EQ(bytes("alice"), 0);
  EXPECT_EQ(bytes("bob"), 0);
}

TEST_P(interaction_store_contract, outbox_retries_and_dead_letters) {
  in_tx([&] {
    store_->outbox_add("a", R"({"n":1})", "s1", t0);
    store_->outbox_add("b", R"({"n":2})", "s2", t0);
  });
  auto due = in_tx([&] { return store_->outbox_due(t0, 10, all); });
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].type, "a");  // oldest first
  EXPECT_EQ(due[1].body, R"({"n":2})");
  in_tx([&] { store_->outbox_retry_later(due[0].seq, t0 + 100, "boom"); });
  due = in_tx([&] { return store_->outbox_due(t0 + 50, 10, all); });
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].type, "b");
  due = in_tx([&] { return store_->outbox_due(t0 + 100, 10, all); });
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].attempts, 1);
  in_tx([&] {
    store_->outbox_dead_letter(due[0].seq, "gave up", t0 + 200);
    store_->outbox_remove(due[1].seq);
  });
  EXPECT_EQ(in_tx([&] { return store_->outbox_pending(); }), 0);
  EXPECT_EQ(in_tx([&] { return store_->dead_letter_count(); }), 1);
}

// outbox_due() takes only messages up to a seq: those sent before the dispatcher waited for the
// disk (a message sent after it may belong to an execution not on disk yet).
TEST_P(interaction_store_contract, outbox_due_stops_at_the_seq_it_is_given) {
  EXPECT_EQ(in_tx([&] { return store_->outbox_last_seq(); }), 0);
  in_tx([&] { store_->outbox_add("a", "{}", "s1", t0); });
  const std::int64_t first = in_tx([&] { return store_->outbox_last_seq(); });
  EXPECT_GT(first, 0);
  in_tx([&] { store_->outbox_add("b", "{}", "s2", t0); });
  EXPECT_GT(in_tx([&] { return store_->outbox_last_seq(); }), first);
  const auto due = in_tx([&] { return store_->outbox_due(t0, 10, first); });
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].type, "a");
  EXPECT_EQ(in_tx([&] { return store_->outbox_due(t0, 10, all).size(); }), 2u);
}

}  // namespace
}  // namespace exactly::server
