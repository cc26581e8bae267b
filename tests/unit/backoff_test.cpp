// The one retry policy: capped, exponential, jittered, never an immediate retry.
#include <exactly/common/backoff.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>

namespace exactly {
namespace {

using ms = std::chrono::milliseconds;

TEST(backoff, is_capped_and_jittered) {
  std::mt19937_64 rng(7);
  const backoff_policy policy{ms(100), ms(30000)};
  for (int attempt = 0; attempt < 40; ++attempt) {
    const ms d = policy.delay(attempt, rng);
    const std::int64_t ceiling = std::min<std::int64_t>(30000, 100LL << std::min(attempt, 30));
    EXPECT_GE(d.count(), ceiling / 2);  // never an immediate retry
    EXPECT_LE(d.count(), ceiling);
  }
  std::set<std::int64_t> seen;
  for (int i = 0; i < 50; ++i)
    seen.insert(policy.delay(10, rng).count());
  EXPECT_GT(seen.size(), 40u);  // jitter spreads retries
}

TEST(backoff, negative_attempts_count_as_the_first) {
  std::mt19937_64 rng(1);
  const backoff_policy policy{ms(40), ms(1000)};
  for (int i = 0; i < 20; ++i) {
    const ms d = policy.delay(-3, rng);
    EXPECT_GE(d.count(), 20);
    EXPECT_LE(d.count(), 40);
  }
}

}  // namespace
}  // namespace exactly
