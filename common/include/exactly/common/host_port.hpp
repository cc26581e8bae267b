#pragma once
// "HOST:PORT" as given on command lines.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly {

struct host_port {
  std::string host;
  std::uint16_t port = 0;
};

// Parses "HOST:PORT" (the last colon splits; port 0..65535, digits only; "[::1]:8080" gives the
// IPv6 host "::1", without its brackets); nullopt otherwise.
std::optional<host_port> parse_host_port(std::string_view text);

}  // namespace exactly
