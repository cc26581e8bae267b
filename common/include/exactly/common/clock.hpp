#pragma once
// Time source in Unix milliseconds, injectable so retention and windows can be tested.

#include <cstdint>
#include <functional>

namespace exactly {

// Returns the current Unix time in milliseconds. Must be safe to call from any thread.
using clock_fn = std::function<std::int64_t()>;

// The system clock (std::chrono::system_clock) in Unix milliseconds.
std::int64_t system_now_ms();

}  // namespace exactly
