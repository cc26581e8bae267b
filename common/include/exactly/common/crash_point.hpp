#pragma once
// Test-only crash injection: ends the process at a named step boundary.

#include <string_view>

namespace exactly {

// Exit status of a process ended by crash_point().
inline constexpr int crash_exit_code = 86;

// If the environment variable EXACTLY_CRASH_AT equals `name`, ends the process at once with
// _exit(crash_exit_code): no destructors, no flushing, as a power cut or SIGKILL would.
// Costs one cached comparison otherwise.
void crash_point(std::string_view name);

}  // namespace exactly
