// The client inspection API's contract on each engine: counts and lists match the rows the stores
// wrote, filters select what they name, and requeue and drop change exactly the entries named.
#include "client_contracts.hpp"

#include "client/src/invocation_store.hpp"
#include "client/src/queue_store.hpp"

#include <exactly/client/inspect.hpp>

#include <stdexcept>
#include <vector>

namespace exactly::test {
namespace {

namespace inspect = client::inspect;
using client::invocation_state;

client::message msg(std::string id, std::string type = "t") {
  return client::message{std::move(id), std::move(type), {{"h", "v"}}, {{"n", 1}}};
}

std::vector<std::int64_t> seqs_of(const std::vector<inspect::error_summary>& v) {
  std::vector<std::int64_t> out;
  for (const auto& e : v)
    out.push_back(e.seq);
  return out;
}

TEST_P(inspect_contract, a_database_is_a_client_database_once_an_endpoint_opened_it) {
  EXPECT_FALSE(inspect::is_client_database(db()));
  client::queue_store q(db());
  client::invocation_store s(db());
  EXPECT_TRUE(inspect::is_client_database(db()));
  EXPECT_TRUE(inspect::queue_depths(db(), 0).empty());
  const auto counts = inspect::invocation_counts(db());
  ASSERT_EQ(counts.size(), 4u);
  EXPECT_EQ(counts[0].state, "post_pending");
  EXPECT_EQ(counts[1].state, "restage_pending");
  EXPECT_EQ(counts[2].state, "awaiting_follow_up");
  EXPECT_EQ(counts[3].state, "delete_pending");
  for (const auto& c : counts)
    EXPECT_EQ(c.count, 0);
}

TEST_P(inspect_contract, queue_depths_count_due_delayed_and_errors_per_endpoint) {
  client::queue_store q(db());
  client::invocation_store s(db());
  ASSERT_TRUE(q.enqueue("a", msg("m1"), 100));
  ASSERT_TRUE(q.enqueue("a", msg("m2"), 100));
  ASSERT_TRUE(q.enqueue("b", msg("m3"), 100));
  q.retry_later(q.due("a", 100, 1)[0].seq, 500, "boom");
  q.add_error("b", msg("e1"), 3, "bad", 150);
  q.add_error("c", msg("e2"), 3, "bad", 150);
  q.add_error("c", msg("e3"), 3, "bad", 150);

  const auto d = inspect::queue_depths(db(), 200);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].endpoint, "a");
  EXPECT_EQ(d[0].due, 1);
  EXPECT_EQ(d[0].delayed, 1);
  EXPECT_EQ(d[0].errors, 0);
  EXPECT_EQ(d[1].endpoint, "b");
  EXPECT_EQ(d[1].due, 1);
  EXPECT_EQ(d[1].delayed, 0);
  EXPECT_EQ(d[1].errors, 1);
  EXPECT_EQ(d[2].endpoint, "c");
  EXPECT_EQ(d[2].due + d[2].delayed, 0);
  EXPECT_EQ(d[2].errors, 2);
  // At 500 the retried message is due again.
  EXPECT_EQ(inspect::queue_depths(db(), 500)[0].due, 2);
}

TEST_P(inspect_contract, invocations_are_counted_by_state_and_listed_by_filter) {
  client::queue_store q(db());
  client::invocation_store s(db());
  s.add({"r1", "billing", "http://pay:1/payments/r1", msg("f1"), 0}, 1000);
  s.add({"r2", "billing", "http://pay:1/payments/r2", msg("f2"), 0}, 2000);
  s.add({"r3", "orders", "http://ship:2/shipments/r3", msg("f3"), 0}, 3000);
  s.add_cleanup("r4", "orders", "http://ship:2/shipments/r4", 4000);
  s.retry_later("r1", 1500, "POST unanswered");
  ASSERT_TRUE(s.move_if_in("r2", invocation_state::post_pending,
                           invocation_state::awaiting_follow_up, 2500));

  const auto counts = inspect::invocation_counts(db());
  EXPECT_EQ(counts[0].count, 2);  // r1, r3
  EXPECT_EQ(counts[1].count, 0);  // restage_pending
  EXPECT_EQ(counts[2].count, 1);  // r2
  EXPECT_EQ(counts[3].count, 1);  // r4

  auto all = inspect::invocations(db(), {}, 5000);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].request_id, "r1");
  EXPECT_EQ(all[0].endpoint, "billing");
  EXPECT_EQ(all[0].url, "http://pay:1/payments/r1");
  EXPECT_EQ(all[0].state, "post_pending");
  EXPECT_EQ(all[0].attempts, 1);
  EXPECT_EQ(all[0].last_error, "POST unanswered");
  EXPECT_EQ(all[0].created_ms, 1000);
  EXPECT_EQ(all[0].due_ms, 1500);
  EXPECT_EQ(all[0].age_ms, 4000);
  EXPECT_EQ(all[1].state, "awaiting_follow_up");
  EXPECT_EQ(all[3].state, "delete_pending");
  EXPECT_EQ(all[3].last_error, "");

  auto ids = [&](const inspect::invocation_filter& f) {
    std::vector<std::string> out;
    for (const auto& i : inspect::invocations(db(), f, 5000))
      out.push_back(i.request_id);
    return out;
  };
  using v = std::vector<std::string>;
  EXPECT_EQ(ids({.state = "post_pending"}), (v{"r1", "r3"}));
  EXPECT_EQ(ids({.endpoint = "orders"}), (v{"r3", "r4"}));
  EXPECT_EQ(ids({.url_prefix = "http://pay:1/"}), (v{"r1", "r2"}));
  EXPECT_EQ(ids({.min_age_ms = 3000}), (v{"r1", "r2"}));  // created at or before 2000
  EXPECT_EQ(ids({.state = "post_pending", .endpoint = "orders"}), (v{"r3"}));
  EXPECT_EQ(ids({.limit = 1}), (v{"r1"}));
  ASSERT_TRUE(
      s.move_if_in("r3", invocation_state::post_pending, invocation_state::restage_pending, 3500));
  EXPECT_EQ(ids({.state = "restage_pending"}), (v{"r3"}));
  EXPECT_EQ(inspect::invocation_counts(db())[1].count, 1);
  EXPECT_THROW(inspect::invocations(db(), {.state = "staged"}, 5000), std::invalid_argument);
}

TEST_P(inspect_contract, errors_are_listed_shown_and_paged) {
  client::queue_store q(db());
  client::invocation_store s(db());
  q.add_error("a", msg("e1", "pay"), 5, "handler threw", 100);
  q.add_error("b", msg("e2"), 1, "422 unprocessable", 200);
  q.add_error("a", msg("e3"), 2, "x", 300);

  const auto all = inspect::errors(db());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].endpoint, "a");
  EXPECT_EQ(all[0].message_id, "e1");
  EXPECT_EQ(all[0].type, "pay");
  EXPECT_EQ(all[0].attempts, 5);
  EXPECT_EQ(all[0].error, "handler threw");
  EXPECT_EQ(all[0].failed_ms, 100);
  EXPECT_EQ(inspect::errors(db(), {.endpoint = "a"}).size(), 2u);
  const auto page = inspect::errors(db(), {.after_seq = all[0].seq, .limit = 1});
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].message_id, "e2");

  const auto one = inspect::error(db(), all[0].seq);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->msg.id, "e1");
  EXPECT_EQ(one->msg.body["n"], 1);
  EXPECT_EQ(one->msg.headers["h"], "v");
  EXPECT_EQ(one->error, "handler threw");
  EXPECT_FALSE(inspect::error(db(), all[2].seq + 100).has_value());
}

TEST_P(inspect_contract, requeue_and_drop_change_only_the_entries_named_and_say_which) {
  client::queue_store q(db());
  client::invocation_store s(db());
  for (const char* id : {"e1", "e2", "e3", "e4", "e5"})
    q.add_error(id == std::string("e5") ? "b" : "a", msg(id), 5, "threw", 100);
  const auto all = seqs_of(inspect::errors(db()));
  ASSERT_EQ(all.size(), 5u);

  // Requeue two and one that does not exist: the two, due now, attempts reset.
  const std::vector<std::int64_t> two{all[0], all[1], all[4] + 100};
  const auto requeued = inspect::requeue_errors(db(), two, 1000);
  EXPECT_EQ(seqs_of(requeued), (std::vector<std::int64_t>{all[0], all[1]}));
  EXPECT_EQ(requeued[0].message_id, "e1");
  const auto due = q.due("a", 1000, 10);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].msg.id, "e1");
  EXPECT_EQ(due[0].attempts, 0);
  EXPECT_TRUE(q.due("a", 999, 10).empty());
  // Asked again, nothing is left to move.
  EXPECT_TRUE(inspect::requeue_errors(db(), two, 1000).empty());

  // Drop one of a's and b's only entry; the rest stay.
  const std::vector<std::int64_t> drop{all[2], all[4]};
  EXPECT_EQ(seqs_of(inspect::drop_errors(db(), drop)), drop);
  EXPECT_TRUE(inspect::drop_errors(db(), drop).empty());
  EXPECT_EQ(seqs_of(inspect::errors(db())), (std::vector<std::int64_t>{all[3]}));
  EXPECT_EQ(q.queued("b"), 0);

  // Requeue all of a's: the one left; b has none.
  q.add_error("b", msg("e6"), 5, "threw", 100);
  const auto rest = inspect::requeue_all_errors(db(), "a", 2000);
  EXPECT_EQ(seqs_of(rest), (std::vector<std::int64_t>{all[3]}));
  EXPECT_EQ(q.queued("a"), 3);
  EXPECT_EQ(inspect::errors(db()).size(), 1u);  // b's
  EXPECT_EQ(inspect::queue_depths(db(), 2000)[0].due, 3);
}

TEST_P(inspect_contract, a_requeue_of_a_message_still_queued_queues_it_once) {
  client::queue_store q(db());
  client::invocation_store s(db());
  ASSERT_TRUE(q.enqueue("a", msg("m1"), 100));
  q.add_error("a", msg("m1"), 5, "threw", 100);
  const auto seq = inspect::errors(db())[0].seq;
  const std::vector<std::int64_t> one{seq};
  EXPECT_EQ(inspect::requeue_errors(db(), one, 200).size(), 1u);
  EXPECT_EQ(q.queued("a"), 1);
  EXPECT_TRUE(inspect::errors(db()).empty());
}

TEST_P(inspect_contract, a_url_prefix_counts_characters_as_both_engines_do) {
  client::queue_store q(db());
  client::invocation_store s(db());
  s.add({"r1", "billing", "http://pay:1/zahlungen/\xc3\xa4rger/r1", msg("f1"), 0}, 1000);
  s.add({"r2", "billing", "http://pay:1/zahlungen/other/r2", msg("f2"), 0}, 1000);
  s.add({"r3", "billing", "http://pay:1/\xe2\x82\xac/r3", msg("f3"), 0}, 1000);
  auto ids = [&](std::string prefix) {
    std::vector<std::string> out;
    for (const auto& i : inspect::invocations(db(), {.url_prefix = std::move(prefix)}, 5000))
      out.push_back(i.request_id);
    return out;
  };
  using v = std::vector<std::string>;
  EXPECT_EQ(ids("http://pay:1/zahlungen/\xc3\xa4"), (v{"r1"}));
  EXPECT_EQ(ids("http://pay:1/zahlungen/\xc3\xa4rger/r1"), (v{"r1"}));
  EXPECT_EQ(ids("http://pay:1/\xe2\x82\xac/"), (v{"r3"}));
  EXPECT_EQ(ids("http://pay:1/zahlungen/"), (v{"r1", "r2"}));
  EXPECT_EQ(ids(""), (v{"r1", "r2", "r3"}));
  EXPECT_TRUE(ids("http://pay:1/zahlungen/\xc3\xa4rger/r1/more").empty());
}

TEST_P(inspect_contract, repairs_refuse_a_database_without_the_client_tables_and_create_none) {
  const std::vector<std::int64_t> one{1};
  EXPECT_THROW(inspect::requeue_errors(db(), one, 100), std::runtime_error);
  EXPECT_THROW(inspect::requeue_all_errors(db(), "a", 100), std::runtime_error);
  EXPECT_THROW(inspect::drop_errors(db(), one), std::runtime_error);
  EXPECT_FALSE(inspect::is_client_database(db()));  // nothing created, nothing migrated
}

TEST_P(inspect_contract, repairs_refuse_a_schema_newer_than_this_build_and_change_nothing) {
  {
    client::queue_store q(db());
    q.add_error("a", msg("e1"), 5, "threw", 100);
  }
  const std::int64_t seq = inspect::errors(db()).at(0).seq;
  db().execute(
      "UPDATE exactly_schema_version SET version = version + 1"
      " WHERE component = 'exactly.client'");
  const std::vector<std::int64_t> one{seq};
  try {
    inspect::requeue_errors(db(), one, 100);
    ADD_FAILURE() << "a newer schema was changed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("this build knows version"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(inspect::drop_errors(db(), one), std::runtime_error);
  EXPECT_EQ(inspect::errors(db()).size(), 1u);
  EXPECT_EQ(db().query_int64("SELECT count(*) FROM exactly_queue"), 0);
}

}  // namespace
}  // namespace exactly::test
