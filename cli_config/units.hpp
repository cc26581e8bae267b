#pragma once
// Durations and sizes as operators write them in flags, config files and environment variables:
// "15s", "500ms", "24h"; "1048576", "64KiB", "1MiB".

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace exactly::cli_config {

// The longest duration accepted: 100 years (36500d), so that a deadline of now() plus any setting
// stays far inside the clocks' range.
inline constexpr std::chrono::milliseconds max_duration{36500LL * 86'400'000};

// A whole number followed by one unit: ms, s, m, h or d ("0" alone is allowed), at most
// max_duration. Throws std::invalid_argument saying the expected form or the bound.
std::chrono::milliseconds parse_duration(std::string_view text);
// The largest unit that divides `d` exactly: 15000ms -> "15s", 0 -> "0".
std::string format_duration(std::chrono::milliseconds d);

// Bytes: a whole number, optionally followed by B, KiB, MiB or GiB (powers of 1024), at most
// INT64_MAX. Throws std::invalid_argument saying the expected form or the bound.
std::uint64_t parse_size(std::string_view text);
// The largest unit that divides `bytes` exactly: 1048576 -> "1MiB", 1000 -> "1000".
std::string format_size(std::uint64_t bytes);

// What a duration option accepts besides a positive value.
enum class zero { refused, allowed };

// Adds a duration option writing into `target`; its default shown is `target`'s value. A bad
// value is a CLI::ValidationError naming the option.
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::chrono::milliseconds& target,
                          const std::string& help, zero z = zero::refused);
// The same, for a duration kept as a number of milliseconds.
CLI::Option* add_duration(CLI::App& app, const std::string& name, std::int64_t& target_ms,
                          const std::string& help, zero z = zero::refused);
// Adds a size option writing into `target` (at least 1 byte).
CLI::Option* add_size(CLI::App& app, const std::string& name, std::size_t& target,
                      const std::string& help);
// The same, for a size kept as a signed number.
CLI::Option* add_size(CLI::App& app, const std::string& name, std::int64_t& target,
                      const std::string& help);

}  // namespace exactly::cli_config
