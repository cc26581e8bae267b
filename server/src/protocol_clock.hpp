#pragma once
// The time the protocol decides with: the raw clock, but never earlier than a time already
// used, whether by this process (kept in memory) or by any process sharing the store (the
// high-water mark the sweeper persists; see connector_requests.cpp). Thread-safe.

#include <exactly/common/clock.hpp>

#include <atomic>
#include <cstdint>

namespace exactly::server {

class protocol_clock {
 public:
  // A raw clock that falls more than `tolerance_ms` behind the highest time used counts as a
  // step back (once per episode, logged).
  explicit protocol_clock(clock_fn raw, std::int64_t tolerance_ms = 1000);

  // max(raw clock, every time used or observed so far); remembers the result.
  std::int64_t now();
  // now(), and never earlier than `floor_ms` (a high-water mark read from the store).
  std::int64_t now_at_least(std::int64_t floor_ms);
  // Step backs of the raw clock seen so far.
  std::int64_t step_backs() const { return step_backs_.load(); }

 private:
  clock_fn raw_;
  std::int64_t tolerance_ms_;
  std::atomic<std::int64_t> high_{0};
  std::atomic<bool> behind_{false};
  std::atomic<std::int64_t> step_backs_{0};
};

}  // namespace exactly::server
