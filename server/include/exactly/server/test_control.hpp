#pragma once
// The optional test-control interface of proto-spec §12 (off by default, never for production):
// a clock tests can move forward, and what the server needs to serve /_exactly/test/.

#include <exactly/common/clock.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace exactly::server {

// The raw clock plus an offset that only grows. Thread-safe.
class test_clock {
 public:
  explicit test_clock(clock_fn raw = system_now_ms) : raw_(std::move(raw)) {}
  std::int64_t now_ms() const { return raw_() + offset_ms_.load(); }
  // The most the clock may be moved forward in all, in ms (100 years of 365.25 days).
  static constexpr std::int64_t max_offset_ms = 3'155'760'000LL * 1000;
  // Moves the clock forward by `ms` (> 0; anything else is ignored). Returns false, moving
  // nothing, when the offset would pass max_offset_ms (no overflow of the offset or of now_ms()).
  bool advance_ms(std::int64_t ms) {
    if (ms <= 0)
      return true;
    std::int64_t offset = offset_ms_.load();
    do {
      if (ms > max_offset_ms - offset)
        return false;
    } while (!offset_ms_.compare_exchange_weak(offset, offset + ms));
    return true;
  }
  // A clock_fn reading this clock, for connector_options::clock; valid while *this lives.
  clock_fn fn() const {
    return [this] { return now_ms(); };
  }

 private:
  clock_fn raw_;
  std::atomic<std::int64_t> offset_ms_{0};
};

// Committed executions of the interaction `id` (storage thread), nullopt when unknown.
using executions_fn = std::function<std::optional<std::int64_t>(const std::string& id)>;

struct test_control_options {
  // The secret of "Authorization: Bearer <key>" on /_exactly/test/; "" = the interface is off
  // (its paths are then ordinary unknown routes). At least 16 characters, and none of the
  // server's API keys (the http_server refuses it otherwise).
  std::string key{};
  // The clock the connector decides with (connector_options::clock = clock->fn()); required
  // with a key.
  std::shared_ptr<test_clock> clock{};
  // Optional: executions of an id, for GET /_exactly/test/executions/{id}.
  executions_fn executions{};
};

}  // namespace exactly::server
