// Protocol answers on the wire: the retention header written, or not, and rounded down.

#include "server/src/respond.hpp"

#include <exactly/common/protocol.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace exactly::server {
namespace {

std::string retention_of(std::optional<std::int64_t> until_ms) {
  interaction_response r{200, "application/json", "{}", "executed", std::nullopt, until_ms};
  const beast_response res = to_beast(std::move(r), 11);
  const auto it = res.find(protocol::retention_header);
  return it == res.end() ? "<absent>" : std::string(it->value());
}

TEST(respond, states_the_retention_rounded_down_to_the_second) {
  EXPECT_EQ(retention_of(784'111'777'999), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(retention_of(std::nullopt), "<absent>");
}

TEST(respond, states_a_retention_beyond_year_9999_as_its_end) {
  EXPECT_EQ(retention_of(std::numeric_limits<std::int64_t>::max()),
            "Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST(respond, a_problem_has_no_retention) {
  const beast_response res = to_beast(problem_response(errc::request_too_old), 11);
  EXPECT_EQ(res.result_int(), 410u);
  EXPECT_EQ(res.find(protocol::retention_header), res.end());
}

}  // namespace
}  // namespace exactly::server
