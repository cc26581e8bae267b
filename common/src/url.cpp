// Splitting http:// and https:// URLs with Boost.URL (url.hpp).
#include <exactly/common/url.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <cctype>
#include <charconv>
#include <stdexcept>

namespace exactly {
namespace {

[[noreturn]] void refuse(std::string_view url, const std::string& why) {
  throw std::invalid_argument("bad URL '" + std::string(url) + "': " + why);
}

}  // namespace

std::string http_url::authority() const {
  return (ipv6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string http_url::origin() const {
  return (https ? "https://" : "http://") + authority();
}

http_url parse_http_url(std::string_view url) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed)
    refuse(url, "not an absolute URL (" + parsed.error().message() + ")");
  const boost::urls::url_view& u = *parsed;
  http_url out;
  if (u.scheme_id() == boost::urls::scheme::https)
    out.https = true;
  else if (u.scheme_id() != boost::urls::scheme::http)
    refuse(url, "unsupported scheme '" + std::string(u.scheme()) + "' (only http and https)");
  if (!u.has_authority())
    refuse(url, "no host (expected " + std::string(u.scheme()) + "://HOST[:PORT]/PATH)");
  if (u.has_userinfo())
    refuse(url, "user information before the host is not supported (send keys as bearer keys)");
  switch (u.host_type()) {
    case boost::urls::host_type::ipv6:
      out.host = u.host_ipv6_address().to_string();
      out.ip_address = true;
      break;
    case boost::urls::host_type::ipv4:
      out.host = std::string(u.encoded_host());
      out.ip_address = true;
      break;
    case boost::urls::host_type::name:
      if (u.encoded_host().find('%') != std::string_view::npos)
        refuse(url, "percent-encoded host names are not supported");
      // Host names are case-insensitive: one spelling for keys and connection pools.
      for (const char c : u.encoded_host())
        out.host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      break;
    default:
      refuse(url, "unsupported host (IPvFuture)");
  }
  if (out.host.empty())
    refuse(url, "empty host");
  out.port = out.https ? 443 : 80;
  if (u.has_port()) {
    const std::string_view digits = u.port();
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port == 0 ||
        port > 65535)
      refuse(url, "bad port '" + std::string(digits) + "' (expected 1-65535)");
    out.port = static_cast<std::uint16_t>(port);
  }
  out.target = std::string(u.encoded_path());
  if (!out.target.empty() && out.target.front() != '/')  // "http://h:8x/": Boost.URL 1.81 splits
    refuse(url, "bad host or port before '" + out.target + "'");
  if (out.target.empty())
    out.target = "/";
  if (u.has_query())
    out.target += "?" + std::string(u.encoded_query());
  return out;
}

}  // namespace exactly
