// The client's queue store on each engine: what a batch's claims take, counted by the seqs they
// return.
#include "client_contracts.hpp"

#include "client/src/queue_store.hpp"

#include <set>
#include <vector>

namespace exactly::test {
namespace {

client::message msg(std::string id) {
  return client::message{std::move(id), "t", {{"h", "v"}}, {{"n", 1}}};
}

// A batch read at 100 whose messages another worker then handled (b) and failed, making it due
// at 500 (c): a claim at 100 takes only a, so c is not handled before its backoff, with the
// attempts of a stale read.
TEST_P(queue_store_contract, a_claim_takes_only_messages_still_queued_and_still_due) {
  client::queue_store q(db());
  for (const char* id : {"a", "b", "c"})
    q.enqueue("e", msg(id), 100);
  std::vector<std::int64_t> seqs;
  for (const client::queued_message& m : q.due("e", 100, 10))
    seqs.push_back(m.seq);
  ASSERT_EQ(seqs.size(), 3u);
  {
    database_transaction tx(db());
    q.consume(seqs[1]);
    q.retry_later(seqs[2], 500, "boom");
    tx.commit();
  }
  database_transaction tx(db());
  EXPECT_EQ(q.claim_all(seqs, 100), (std::set<std::int64_t>{seqs[0]}));
  EXPECT_EQ(q.claim_all(seqs, 500), (std::set<std::int64_t>{seqs[0], seqs[2]}));
}

// claim_due takes the oldest due messages up to its limit, none due later.
TEST_P(queue_store_contract, claim_due_takes_the_oldest_due_messages_up_to_the_limit) {
  client::queue_store q(db());
  q.enqueue("e", msg("later"), 300);
  q.enqueue("e", msg("first"), 100);
  q.enqueue("e", msg("second"), 150);
  q.enqueue("e", msg("third"), 200);
  q.enqueue("other", msg("elsewhere"), 50);
  database_transaction tx(db());
  const std::vector<client::queued_message> got = q.claim_due("e", 250, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].msg.id, "first");
  EXPECT_EQ(got[1].msg.id, "second");
  EXPECT_EQ(q.claim_due("e", 250, 10).size(), 3u);
}

}  // namespace
}  // namespace exactly::test
