#include <exactly/common/host_port.hpp>

#include <gtest/gtest.h>

namespace exactly {
namespace {

TEST(host_port, parses_host_and_port) {
  const auto a = parse_host_port("127.0.0.1:8080");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_EQ(parse_host_port("localhost:0")->port, 0);
  EXPECT_EQ(parse_host_port("::1:65535")->host, "::1");
  EXPECT_EQ(parse_host_port("[::1]:8080")->host, "::1");
  EXPECT_EQ(parse_host_port("[::1]:8080")->port, 8080);
}

TEST(host_port, refuses_malformed) {
  for (const char* bad : {"", "8080", ":8080", "host:", "host:65536", "host:-1", "host:80x",
                          "host: 80", "[]:80", "[::1:80", "::1]:80"}) {
    EXPECT_FALSE(parse_host_port(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace exactly
