// The server's id state machine: every stored state × verb × owner, with expectations written out.

#include "server/src/id_state.hpp"

#include <gtest/gtest.h>

#include <limits>

#include <set>

namespace exactly::server {
namespace {

constexpr std::int64_t now = 10'000'000'000;  // ms
const timing t{};                             // defaults: 24 h, 7 d, 1 h, 5 min

enum class stored {
  unknown,
  staged,
  executed,
  tomb_deleted,
  tomb_expired,
  tomb_response_expired,
  staged_past_ttl,
  executed_past_retention,
};

std::optional<record_facts> make(stored s, const std::string& owner = "alice") {
  record_facts r;
  r.owner = owner;
  r.request_sha256 = "digest";
  r.request_content_type = "application/json";
  r.state_since_ms = now - 1000;
  switch (s) {
    case stored::unknown:
      return std::nullopt;
    case stored::staged:
      r.state = id_state::staged;
      break;
    case stored::executed:
      r.state = id_state::executed;
      break;
    case stored::tomb_deleted:
      r.state = id_state::tombstone;
      r.reason = tombstone_reason::deleted;
      break;
    case stored::tomb_expired:
      r.state = id_state::tombstone;
      r.reason = tombstone_reason::expired;
      break;
    case stored::tomb_response_expired:
      r.state = id_state::tombstone;
      r.reason = tombstone_reason::response_expired;
      break;
    case stored::staged_past_ttl:
      r.state = id_state::staged;
      r.state_since_ms = now - t.staged_ttl_ms;
      break;
    case stored::executed_past_retention:
      r.state = id_state::executed;
      r.state_since_ms = now - t.response_retention_ms;
      break;
  }
  return r;
}

request_facts facts(verb v, std::string_view principal = "alice") {
  return {v, principal, now - 1000, now, "digest", "application/json"};
}

decision ok(action a) {
  return {a, errc::request_unknown};
}
decision no(errc e) {
  return {action::fail, e};
}

struct row {
  stored s;
  verb v;
  decision want;
};

// Owner's view: every stored state × every verb, the request body identical to the staged one.
const row table[] = {
    {stored::unknown, verb::put, ok(action::stage)},
    {stored::unknown, verb::post, no(errc::request_unknown)},
    {stored::unknown, verb::get, no(errc::request_unknown)},
    {stored::unknown, verb::delete_, ok(action::tombstone_unknown)},
    {stored::staged, verb::put, ok(action::confirm_staged)},
    {stored::staged, verb::post, ok(action::execute)},
    {stored::staged, verb::get, no(errc::not_executed)},
    {stored::staged, verb::delete_, ok(action::tombstone)},
    {stored::executed, verb::put, no(errc::request_consumed)},
    {stored::executed, verb::post, ok(action::replay)},
    {stored::executed, verb::get, ok(action::replay)},
    {stored::executed, verb::delete_, ok(action::tombstone)},
    {stored::tomb_deleted, verb::put, no(errc::request_consumed)},
    {stored::tomb_deleted, verb::post, no(errc::request_consumed)},
    {stored::tomb_deleted, verb::get, no(errc::request_consumed)},
    {stored::tomb_deleted, verb::delete_, ok(action::no_change)},
    {stored::tomb_expired, verb::put, no(errc::request_consumed)},
    {stored::tomb_expired, verb::post, no(errc::request_expired)},
    {stored::tomb_expired, verb::get, no(errc::request_expired)},
    {stored::tomb_expired, verb::delete_, ok(action::no_change)},
    {stored::tomb_response_expired, verb::put, no(errc::request_consumed)},
    {stored::tomb_response_expired, verb::post, no(errc::response_expired)},
    {stored::tomb_response_expired, verb::get, no(errc::response_expired)},
    {stored::tomb_response_expired, verb::delete_, ok(action::no_change)},
    {stored::staged_past_ttl, verb::put, no(errc::request_consumed)},
    {stored::staged_past_ttl, verb::post, no(errc::request_expired)},
    {stored::staged_past_ttl, verb::get, no(errc::request_expired)},
    {stored::staged_past_ttl, verb::delete_, ok(action::no_change)},
    {stored::executed_past_retention, verb::put, no(errc::request_consumed)},
    {stored::executed_past_retention, verb::post, no(errc::response_expired)},
    {stored::executed_past_retention, verb::get, no(errc::response_expired)},
    {stored::executed_past_retention, verb::delete_, ok(action::no_change)},
};

TEST(id_state, owner_table) {
  for (const row& r : table) {
    EXPECT_EQ(decide(make(r.s), facts(r.v), t), r.want)
        << "state " << static_cast<int>(r.s) << " verb " << static_cast<int>(r.v);
  }
}

TEST(id_state, table_covers_every_state_and_verb) {
  std::set<std::pair<int, int>> seen;
  for (const row& r : table)
    seen.emplace(static_cast<int>(r.s), static_cast<int>(r.v));
  EXPECT_EQ(seen.size(), 8u * 4u);
}

TEST(id_state, another_principal_gets_unknown_on_every_known_state_and_verb) {
  for (const row& r : table) {
    if (r.s == stored::unknown)
      continue;
    EXPECT_EQ(decide(make(r.s, "alice"), facts(r.v, "bob"), t), no(errc::request_unknown))
        << "state " << static_cast<int>(r.s) << " verb " << static_cast<int>(r.v);
  }
}

TEST(id_state, put_of_staged_compares_body_and_content_type) {
  request_facts f = facts(verb::put);
  f.body_sha256 = "other";
  EXPECT_EQ(decide(make(stored::staged), f, t), no(errc::request_mismatch));
  f = facts(verb::put);
  f.content_type = "text/plain";
  EXPECT_EQ(decide(make(stored::staged), f, t), no(errc::request_mismatch));
}

TEST(id_state, put_of_unknown_checks_the_acceptance_window) {
  request_facts f = facts(verb::put);
  f.id_ms = now - t.acceptance_window_ms - 1;
  EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_too_old));
  f.id_ms = now - t.acceptance_window_ms;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::stage));
  f.id_ms = now + t.max_future_skew_ms;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::stage));
  f.id_ms = now + t.max_future_skew_ms + 1;
  EXPECT_EQ(decide(std::nullopt, f, t), no(errc::invalid_request_id));
}

TEST(id_state, post_and_get_of_an_unknown_id_older_than_the_window_are_gone) {
  for (const verb v : {verb::post, verb::get}) {
    request_facts f = facts(v);
    f.id_ms = now - t.acceptance_window_ms - 1;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_too_old));
    // Exactly at the edge a PUT would still stage it: not gone yet.
    f.id_ms = now - t.acceptance_window_ms;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_unknown));
    f.id_ms = now + t.max_future_skew_ms;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_unknown));
    // From further in the future than a PUT may be: it may be staged once the clock comes near.
    f.id_ms = now + t.max_future_skew_ms + 1;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_unknown));
    // An unknown id has no owner: gone for every principal alike.
    f = facts(v, "bob");
    f.id_ms = now - t.acceptance_window_ms - 1;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_too_old));
    f.id_ms = std::numeric_limits<std::int64_t>::min() / 2;
    EXPECT_EQ(decide(std::nullopt, f, t), no(errc::request_too_old));
  }
}

TEST(id_state, an_old_id_that_exists_decides_by_its_state_and_owner) {
  for (const row& r : table) {
    if (r.s == stored::unknown)
      continue;
    request_facts f = facts(r.v);
    f.id_ms = now - 2 * t.acceptance_window_ms;
    EXPECT_EQ(decide(make(r.s), f, t), r.want)
        << "state " << static_cast<int>(r.s) << " verb " << static_cast<int>(r.v);
    // Another principal's id stays unknown to it (404), however old.
    f.principal = "bob";
    EXPECT_EQ(decide(make(r.s), f, t), no(errc::request_unknown))
        << "state " << static_cast<int>(r.s) << " verb " << static_cast<int>(r.v);
  }
}

TEST(id_state, available_until_is_where_effective_expires_the_record) {
  record_facts r = *make(stored::staged);
  r.state_since_ms = now - 5000;
  ASSERT_EQ(available_until(r, t), now - 5000 + t.staged_ttl_ms);
  EXPECT_EQ(effective(r, *available_until(r, t) - 1, t).state, id_state::staged);
  EXPECT_EQ(effective(r, *available_until(r, t), t).state, id_state::tombstone);

  r = *make(stored::executed);
  r.state_since_ms = now - 5000;
  ASSERT_EQ(available_until(r, t), now - 5000 + t.response_retention_ms);
  EXPECT_EQ(effective(r, *available_until(r, t) - 1, t).state, id_state::executed);
  EXPECT_EQ(effective(r, *available_until(r, t), t).state, id_state::tombstone);

  for (const stored s : {stored::tomb_deleted, stored::tomb_expired, stored::tomb_response_expired})
    EXPECT_EQ(available_until(*make(s), t), std::nullopt);
}

TEST(id_state, delete_of_unknown_writes_a_tombstone_only_inside_the_window) {
  request_facts f = facts(verb::delete_);
  f.id_ms = now - t.acceptance_window_ms - 1;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::no_change));
  f.id_ms = now - t.acceptance_window_ms;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::tombstone_unknown));
  f.id_ms = now + t.max_future_skew_ms;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::tombstone_unknown));
  // Further in the future than a PUT may be: no tombstone, which the sweeper could only purge
  // once the clock reached it (a DELETE loop would grow the table without bound).
  f.id_ms = now + t.max_future_skew_ms + 1;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::no_change));
  f.id_ms = std::numeric_limits<std::int64_t>::max() / 2;
  EXPECT_EQ(decide(std::nullopt, f, t), ok(action::no_change));
}

TEST(id_state, window_does_not_apply_to_known_ids) {
  request_facts f = facts(verb::put);
  f.id_ms = now - 10 * t.acceptance_window_ms;  // staged long ago, re-PUT now: still confirmed
  EXPECT_EQ(decide(make(stored::staged), f, t), ok(action::confirm_staged));
  f.v = verb::post;
  EXPECT_EQ(decide(make(stored::staged), f, t), ok(action::execute));
}

TEST(id_state, decide_stage) {
  EXPECT_EQ(decide_stage(false, 0, 3, 0, 100), no(errc::invalid_payload));
  EXPECT_EQ(decide_stage(false, 3, 3, 200, 100), no(errc::invalid_payload));  // payload first
  EXPECT_EQ(decide_stage(true, 2, 3, 100, 100), ok(action::stage));  // the budget is inclusive
  EXPECT_EQ(decide_stage(true, 3, 3, 0, 100), no(errc::too_many_staged));
  EXPECT_EQ(decide_stage(true, 4, 3, 0, 100), no(errc::too_many_staged));
  EXPECT_EQ(decide_stage(true, 0, 3, 101, 100), no(errc::too_many_staged));  // over the bytes
}

TEST(id_state, effective_expiry_boundaries) {
  record_facts r = *make(stored::staged);
  r.state_since_ms = now - t.staged_ttl_ms + 1;
  EXPECT_EQ(effective(r, now, t).state, id_state::staged);
  r.state_since_ms = now - t.staged_ttl_ms;
  EXPECT_EQ(effective(r, now, t).state, id_state::tombstone);
  EXPECT_EQ(effective(r, now, t).reason, tombstone_reason::expired);

  r = *make(stored::executed);
  r.state_since_ms = now - t.response_retention_ms + 1;
  EXPECT_EQ(effective(r, now, t).state, id_state::executed);
  r.state_since_ms = now - t.response_retention_ms;
  EXPECT_EQ(effective(r, now, t).state, id_state::tombstone);
  EXPECT_EQ(effective(r, now, t).reason, tombstone_reason::response_expired);

  r = *make(stored::tomb_deleted);
  r.state_since_ms = 0;  // tombstones never change by time
  EXPECT_EQ(effective(r, now, t).reason, tombstone_reason::deleted);
}

TEST(id_state, tombstone_purge_needs_both_times_out_of_the_window) {
  const std::int64_t edge = now - t.acceptance_window_ms;
  EXPECT_TRUE(tombstone_purgeable(edge - 1, edge - 1, now, t));
  EXPECT_FALSE(tombstone_purgeable(edge, edge - 1, now, t));
  EXPECT_FALSE(tombstone_purgeable(edge - 1, edge, now, t));
  EXPECT_FALSE(tombstone_purgeable(now, now, now, t));
  // A tombstone of an id from further ahead than the skew (written before DELETE refused such
  // ids): purgeable once its own age has left the window, whatever its id says.
  const std::int64_t far = 8'000'000'000'000'000;  // year 10889-like
  EXPECT_TRUE(tombstone_purgeable(far, edge - 1, now, t));
  EXPECT_FALSE(tombstone_purgeable(far, edge, now, t));
  EXPECT_TRUE(tombstone_purgeable(edge - 1 + t.max_future_skew_ms + 1, edge - 1, now, t));
  EXPECT_FALSE(tombstone_purgeable(edge - 1 + t.max_future_skew_ms, edge - 1, now, t));
}

}  // namespace
}  // namespace exactly::server
