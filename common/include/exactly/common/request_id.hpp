#pragma once
// Request ids: UUID version 7 in canonical lowercase text, minted by clients, one per invocation.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly {

// A validated UUIDv7. Thread-safe value type.
class request_id {
 public:
  // Mints a fresh id carrying `unix_ms` (48 bits) and 74 random bits from OpenSSL's CSPRNG.
  // Throws std::runtime_error only if the system random source fails.
  static request_id mint(std::int64_t unix_ms);
  // Mints a fresh id with the system clock's current time.
  static request_id mint();
  // As mint(unix_ms), but ids minted this way in one process only rise: the time is never
  // earlier than the last one used (a clock set back mints with that time until it catches up),
  // and ids of one millisecond count up in their 12 bits after the version (RFC 9562 §6.2,
  // method 1), with 62 random bits left. Thread-safe.
  static request_id mint_monotonic(std::int64_t unix_ms);
  // Parses canonical lowercase text (8-4-4-4-12 hex); nullopt for anything else, including
  // uppercase, other UUID versions and non-RFC 9562 variants.
  static std::optional<request_id> parse(std::string_view text);

  // The embedded Unix timestamp in milliseconds.
  std::int64_t timestamp_ms() const;
  // Canonical lowercase text form (36 characters).
  std::string to_string() const;
  const std::array<std::uint8_t, 16>& bytes() const { return bytes_; }

  friend bool operator==(const request_id&, const request_id&) = default;

 private:
  explicit request_id(const std::array<std::uint8_t, 16>& b) : bytes_(b) {}
  std::array<std::uint8_t, 16> bytes_{};
};

}  // namespace exactly
