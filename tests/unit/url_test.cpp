// The client's URLs through Boost.URL: default ports, IPv6 literals, and what is refused.
#include <exactly/client/http_transport.hpp>
#include <exactly/common/url.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace exactly::client {
namespace {

// The message of the std::invalid_argument `url` is refused with, "" when it is accepted.
std::string refusal(const std::string& url) {
  try {
    parse_http_url(url);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(url, explicit_port_path_and_query) {
  const http_url u = parse_http_url("http://127.0.0.1:8080/payment/authorize/abc?x=1");
  EXPECT_FALSE(u.https);
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.target, "/payment/authorize/abc?x=1");
  EXPECT_EQ(u.authority(), "127.0.0.1:8080");
  EXPECT_EQ(u.origin(), "http://127.0.0.1:8080");
}

TEST(url, default_ports_by_scheme) {
  const http_url s = parse_http_url("https://payments.example.com/v1/authorize/1");
  EXPECT_TRUE(s.https);
  EXPECT_EQ(s.host, "payments.example.com");
  EXPECT_EQ(s.port, 443);
  EXPECT_EQ(s.target, "/v1/authorize/1");
  EXPECT_EQ(s.authority(), "payments.example.com:443");
  const http_url p = parse_http_url("http://payments.example.com/x");
  EXPECT_EQ(p.port, 80);
  EXPECT_EQ(parse_http_url("HTTPS://example.com/x").port, 443);  // schemes are case-insensitive
  EXPECT_EQ(parse_http_url("http://example.com").target, "/");
  EXPECT_EQ(parse_http_url("http://example.com?q").target, "/?q");
  EXPECT_FALSE(p.ip_address);
}

TEST(url, host_names_in_lower_case_and_address_literals_marked) {
  // One spelling per host: the API key of example.com:80 and one pool of connections.
  EXPECT_EQ(parse_http_url("HTTP://Payments.Example.COM/X").host, "payments.example.com");
  EXPECT_EQ(parse_http_url("HTTP://Payments.Example.COM/X").target,
            "/X");  // the path keeps its case
  EXPECT_EQ(url_authority("http://Example.com/"), url_authority("http://example.COM:80/"));
  // Addresses are no server names (no SNI for them, RFC 6066).
  EXPECT_TRUE(parse_http_url("https://127.0.0.1:8443/").ip_address);
  EXPECT_TRUE(parse_http_url("https://[::1]/").ip_address);
  EXPECT_FALSE(parse_http_url("https://localhost/").ip_address);
}

TEST(url, ipv6_literals) {
  const http_url u = parse_http_url("http://[::1]:8080/");
  EXPECT_EQ(u.host, "::1");  // what the resolver connects to
  EXPECT_TRUE(u.ipv6());
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.target, "/");
  EXPECT_EQ(u.authority(), "[::1]:8080");  // the Host header and the key lookup
  EXPECT_EQ(parse_http_url("https://[2001:db8::7]/a").authority(), "[2001:db8::7]:443");
  EXPECT_EQ(url_authority("http://[::1]:9/a"), "[::1]:9");
}

TEST(url, refuses_other_schemes) {
  EXPECT_NE(refusal("ftp://example.com/x").find("unsupported scheme 'ftp'"), std::string::npos);
  EXPECT_NE(refusal("ws://example.com:80/x").find("unsupported scheme"), std::string::npos);
  EXPECT_NE(refusal("example.com:80/x").find("unsupported scheme"), std::string::npos);
}

TEST(url, refuses_user_information) {
  EXPECT_NE(refusal("http://user:secret@example.com/x").find("user information"),
            std::string::npos);
  EXPECT_NE(refusal("http://user@example.com/x").find("user information"), std::string::npos);
}

TEST(url, refuses_an_empty_host) {
  EXPECT_NE(refusal("http:///x").find("empty host"), std::string::npos);
  EXPECT_NE(refusal("http://:8080/x").find("empty host"), std::string::npos);
  EXPECT_NE(refusal("http:/x").find("no host"), std::string::npos);
}

TEST(url, refuses_bad_ports) {
  for (const char* bad :
       {"http://h:0/x", "http://h:65536/x", "http://h:99999999999/x", "http://h:/x"}) {
    EXPECT_NE(refusal(bad).find("bad port"), std::string::npos) << bad << ": " << refusal(bad);
  }
  EXPECT_NE(refusal("http://h:8x/x").find("bad URL"), std::string::npos);
}

TEST(url, refuses_what_is_not_a_url) {
  for (const char* bad : {"", "not a url", "http://exa mple.com/x", "http://[::1/x"}) {
    EXPECT_NE(refusal(bad).find("bad URL"), std::string::npos) << bad;
  }
  EXPECT_NE(refusal("http://[::1/x").find("http://[::1/x"), std::string::npos);  // quoted
}

}  // namespace
}  // namespace exactly::client
