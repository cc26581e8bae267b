// Splitting "host:port" for the command lines.
#include <exactly/common/host_port.hpp>

#include <charconv>

namespace exactly {

std::optional<host_port> parse_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    return std::nullopt;
  const std::string_view digits = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port > 65535) {
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  if (host.starts_with('[') != host.ends_with(']'))
    return std::nullopt;
  if (host.starts_with('[')) {  // "[::1]:8080": an IPv6 address, written as in URLs
    host = host.substr(1, host.size() - 2);
    if (host.empty())
      return std::nullopt;
  }
  return host_port{std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace exactly
