#include "server/src/router.hpp"

#include <gtest/gtest.h>

namespace exactly::server {
namespace {

router make_router() {
  router r;
  r.add_connector_route("/payment/authorize/{id}");
  r.add_user_route(
      "GET", "/accounts/{customer_id}", [](const http_request&) { return http_response{}; }, true);
  return r;
}

TEST(router, connector_route_takes_the_last_segment_as_id) {
  const auto m = make_router().match("POST", "/payment/authorize/abc");
  ASSERT_EQ(m.matched, route_match::kind::connector);
  EXPECT_EQ(m.route_template, "/payment/authorize/{id}");
  EXPECT_EQ(m.id, "abc");
}

TEST(router, connector_route_needs_exactly_one_id_segment) {
  const router r = make_router();
  EXPECT_EQ(r.match("POST", "/payment/authorize/").matched, route_match::kind::none);
  EXPECT_EQ(r.match("POST", "/payment/authorize/a/b").matched, route_match::kind::none);
  EXPECT_EQ(r.match("POST", "/payment/authorize").matched, route_match::kind::none);
  EXPECT_EQ(r.match("POST", "/payment/authorizeX/a").matched, route_match::kind::none);
}

TEST(router, other_methods_on_a_connector_route_are_not_allowed) {
  const auto m = make_router().match("PATCH", "/payment/authorize/abc");
  ASSERT_EQ(m.matched, route_match::kind::method_not_allowed);
  EXPECT_EQ(m.allow, "PUT, POST, GET, DELETE");
}

TEST(router, user_route_binds_parameters) {
  const auto m = make_router().match("GET", "/accounts/c-1");
  ASSERT_EQ(m.matched, route_match::kind::user);
  EXPECT_EQ(m.params.at("customer_id"), "c-1");
  EXPECT_EQ(make_router().match("GET", "/accounts/").matched, route_match::kind::none);
}

TEST(router, user_route_with_other_method_lists_allowed) {
  const auto m = make_router().match("DELETE", "/accounts/c-1");
  ASSERT_EQ(m.matched, route_match::kind::method_not_allowed);
  EXPECT_EQ(m.allow, "GET");
}

TEST(router, split_path_keeps_empty_segments) {
  EXPECT_EQ(split_path("/a//b").size(), 3u);
  EXPECT_EQ(split_path("/").size(), 1u);
}

}  // namespace
}  // namespace exactly::server
