#pragma once
// The one retry policy of the project: capped exponential backoff with equal jitter.

#include <chrono>
#include <random>

namespace exactly {

struct backoff_policy {
  std::chrono::milliseconds base{100};
  std::chrono::milliseconds cap{30000};

  // The wait before retry number `attempt` (0 for the first retry): uniform in [c/2, c] with
  // c = min(cap, base * 2^attempt), so a retry always waits at least half its step and
  // concurrent retries still spread out.
  std::chrono::milliseconds delay(int attempt, std::mt19937_64& rng) const;
};

}  // namespace exactly
