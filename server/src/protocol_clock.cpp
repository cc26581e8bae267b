// The protocol's monotonic time over an injectable raw clock (see protocol_clock.hpp).
#include "protocol_clock.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace exactly::server {

protocol_clock::protocol_clock(clock_fn raw, std::int64_t tolerance_ms)
    : raw_(std::move(raw)), tolerance_ms_(tolerance_ms) {}

std::int64_t protocol_clock::now() {
  return now_at_least(0);
}

std::int64_t protocol_clock::now_at_least(std::int64_t floor_ms) {
  const std::int64_t raw = raw_();
  std::int64_t high = high_.load();
  const std::int64_t used = std::max({raw, high, floor_ms});
  while (high < used && !high_.compare_exchange_weak(high, used)) {
  }
  const std::int64_t highest = std::max(high, used);
  const bool behind = raw + tolerance_ms_ < highest;
  if (behind != behind_.exchange(behind)) {
    if (behind) {
      step_backs_++;
      spdlog::warn(
          "the system clock is {} ms behind the highest time the protocol has used; deciding "
          "with that time until the clock catches up",
          highest - raw);
    } else {
      spdlog::info("the system clock has caught up with the protocol's time");
    }
  }
  return highest;
}

}  // namespace exactly::server
