#pragma once
// http:// and https:// URLs split by Boost.URL (which stays out of this header): the client's
// transport and the conformance tool read their URLs through it.

#include <cstdint>
#include <string>
#include <string_view>

namespace exactly {

struct http_url {
  bool https = false;
  std::string host;  // a name in lower case, an IPv4 address, or an IPv6 address without brackets
  bool ip_address = false;  // the host is an IPv4 or IPv6 address, not a name
  std::uint16_t port;       // the URL's, else 80 for http and 443 for https
  std::string target;       // path (at least "/") and query, as sent in the request line

  bool ipv6() const { return host.find(':') != std::string::npos; }
  // "host:port", an IPv6 host in brackets: the Host header and what API keys are matched with.
  std::string authority() const;
  // "http://authority" or "https://authority": one pool of connections each.
  std::string origin() const;
};

// Splits an absolute http:// or https:// URL. Throws std::invalid_argument naming what is wrong
// and quoting the URL: not a URL, another scheme, user information, no host, a port that is not
// 1-65535.
http_url parse_http_url(std::string_view url);

}  // namespace exactly
