// Fuzzes request_id::parse: it never crashes, accepts exactly the canonical UUIDv7 text
// (36 characters, lowercase hex, dashes at 8-13-18-23, version 7, variant 10xx) and round trips:
// parse(x).to_string() == x, and parse(to_string(id)) == id.
#include <exactly/common/request_id.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "request_id property broken: %s (input \"%.*s\")\n", what,
               static_cast<int>(input.size()), input.data());
  std::abort();
}

bool is_lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int hex_value(char c) {
  return c <= '9' ? c - '0' : c - 'a' + 10;
}

// The canonical form, written independently of the parser.
bool canonical(std::string_view s) {
  if (s.size() != 36)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_lower_hex(s[i]))
      return false;
  }
  return s[14] == '7' && (hex_value(s[19]) & 0xC) == 0x8;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto id = exactly::request_id::parse(text);
  if (id.has_value() != canonical(text))
    fail(id ? "accepted a non-canonical text" : "refused a canonical text", text);
  if (!id)
    return 0;
  const std::string back = id->to_string();
  if (back != text)
    fail("to_string() differs from the text parsed", text);
  const auto again = exactly::request_id::parse(back);
  if (!again || *again != *id)
    fail("parse(to_string(id)) != id", text);
  // The timestamp is the first 48 bits, the hex digits before the second dash.
  const std::int64_t ms = std::strtoll(
      (std::string(text.substr(0, 8)) + std::string(text.substr(9, 4))).c_str(), nullptr, 16);
  if (id->timestamp_ms() != ms)
    fail("timestamp_ms() is not the first 48 bits", text);
  return 0;
}
