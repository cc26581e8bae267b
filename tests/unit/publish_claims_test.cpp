// publish_claims: the ids a runtime's publishers are sending now, and the mark that makes a read
// older than another turn's end read again.
#include "client/src/publish_claims.hpp"

#include <gtest/gtest.h>

namespace exactly::client {
namespace {

TEST(publish_claims, a_turn_gets_only_the_ids_no_other_turn_is_sending) {
  publish_claims claims;
  const auto first = claims.claim(claims.mark(), {"a", "b"});
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (std::set<std::string>{"a", "b"}));
  const auto second = claims.claim(claims.mark(), {"b", "c"});
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, (std::set<std::string>{"c"}));
}

TEST(publish_claims, a_read_begun_before_another_turn_ended_is_read_again) {
  publish_claims claims;
  const auto held = claims.claim(claims.mark(), {"a"});
  ASSERT_TRUE(held);
  // B marks and reads "a" as due while A sends it; A commits "a" done and ends its turn; B's
  // read may be older than that commit, so its claim is refused, not granted "a" again.
  const std::uint64_t b_mark = claims.mark();
  claims.release(*held);
  EXPECT_FALSE(claims.claim(b_mark, {"a"}));
  // Read again after the end: granted.
  const auto again = claims.claim(claims.mark(), {"a"});
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, (std::set<std::string>{"a"}));
}

TEST(publish_claims, a_refused_claim_holds_nothing) {
  publish_claims claims;
  const std::uint64_t stale = claims.mark();
  claims.release(*claims.claim(claims.mark(), {"x"}));
  EXPECT_FALSE(claims.claim(stale, {"a", "b"}));
  const auto later = claims.claim(claims.mark(), {"a", "b"});
  ASSERT_TRUE(later);
  EXPECT_EQ(later->size(), 2u);
}

}  // namespace
}  // namespace exactly::client
