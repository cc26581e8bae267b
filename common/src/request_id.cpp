// Request ids: UUIDv7 minted from a cryptographic random source, parsed only in canonical form.
#include <exactly/common/clock.hpp>
#include <exactly/common/request_id.hpp>

#include <openssl/rand.h>

#include <mutex>
#include <stdexcept>

namespace exactly {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;  // uppercase is not canonical
}

bool is_dash_position(std::size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

}  // namespace

request_id request_id::mint(std::int64_t unix_ms) {
  std::array<std::uint8_t, 16> b{};
  if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) {
    throw std::runtime_error("request_id: RAND_bytes failed");
  }
  const auto ms = static_cast<std::uint64_t>(unix_ms) & 0xFFFF'FFFF'FFFFull;
  for (int i = 0; i < 6; ++i)
    b[i] = static_cast<std::uint8_t>(ms >> (8 * (5 - i)));
  b[6] = static_cast<std::uint8_t>(0x70 | (b[6] & 0x0F));  // version 7
  b[8] = static_cast<std::uint8_t>(0x80 | (b[8] & 0x3F));  // variant 10xx
  return request_id(b);
}

request_id request_id::mint() {
  return mint(system_now_ms());
}

request_id request_id::mint_monotonic(std::int64_t unix_ms) {
  static std::mutex m;
  static std::int64_t last_ms = 0;
  static std::uint32_t counter = 0;
  request_id out = mint(0);  // the random bits (one draw); time and sequence are set below
  std::int64_t ms = 0;
  std::uint32_t seq = 0;
  {
    const std::scoped_lock lock(m);
    if (unix_ms > last_ms) {
      last_ms = unix_ms;
      counter = out.bytes_[7] & 0x7F;  // a random start in the lower half leaves room to count
    } else if (++counter > 0xFFF) {
      ++last_ms;  // 4096 ids in one millisecond: borrow the next one
      counter = 0;
    }
    ms = last_ms;
    seq = counter;
  }
  for (int i = 0; i < 6; ++i)
    out.bytes_[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(ms) >> (8 * (5 - i)));
  out.bytes_[6] = static_cast<std::uint8_t>(0x70 | (seq >> 8));
  out.bytes_[7] = static_cast<std::uint8_t>(seq & 0xFF);
  return out;
}

std::optional<request_id> request_id::parse(std::string_view text) {
  if (text.size() != 36)
    return std::nullopt;
  std::array<std::uint8_t, 16> b{};
  std::size_t out = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (is_dash_position(i)) {
      if (text[i] != '-')
        return std::nullopt;
      ++i;
      continue;
    }
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0 || is_dash_position(i + 1))
      return std::nullopt;
    b[out++] = static_cast<std::uint8_t>(hi << 4 | lo);
    i += 2;
  }
  if ((b[6] >> 4) != 7)
    return std::nullopt;
  if ((b[8] & 0xC0) != 0x80)
    return std::nullopt;
  return request_id(b);
}

std::int64_t request_id::timestamp_ms() const {
  std::uint64_t ms = 0;
  for (int i = 0; i < 6; ++i)
    ms = ms << 8 | bytes_[i];
  return static_cast<std::int64_t>(ms);
}

std::string request_id::to_string() const {
  std::string s;
  s.reserve(36);
  for (std::size_t i = 0; i < bytes_.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      s.push_back('-');
    s.push_back(hex_digits[bytes_[i] >> 4]);
    s.push_back(hex_digits[bytes_[i] & 0x0F]);
  }
  return s;
}

}  // namespace exactly
