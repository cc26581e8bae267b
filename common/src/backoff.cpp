// The retry policy: capped exponential backoff with equal jitter.
#include <exactly/common/backoff.hpp>

#include <algorithm>
#include <cstdint>

namespace exactly {

std::chrono::milliseconds backoff_policy::delay(int attempt, std::mt19937_64& rng) const {
  const int shift = std::clamp(attempt, 0, 30);
  const std::int64_t ceiling = std::min<std::int64_t>(cap.count(), base.count() << shift);
  const std::int64_t top = std::max<std::int64_t>(0, ceiling);
  std::uniform_int_distribution<std::int64_t> pick(top / 2, top);
  return std::chrono::milliseconds(pick(rng));
}

}  // namespace exactly
