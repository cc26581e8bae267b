#pragma once
// The test-control interface under /_exactly/test/ (proto-spec §12): read and advance the clock,
// run the sweeper, count rows by state and executions of an id. Off unless a key is configured.

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>
#include <exactly/server/test_control.hpp>

#include <string_view>
#include <vector>

namespace exactly::server {

inline constexpr std::string_view test_control_prefix = "/_exactly/test/";

class test_control_page {
 public:
  // The most one POST /_exactly/test/clock may advance: 100 years of 365.25 days, in seconds.
  static constexpr std::int64_t max_advance_seconds = 3'155'760'000LL;

  // Throws std::invalid_argument for a key without a clock, a key shorter than 16 characters,
  // or a key equal to one of `api_keys` (the server's; an API key must never open this).
  test_control_page(test_control_options o, const std::vector<api_key>& api_keys, connector& c);

  // Whether the interface is on and `path` lies under its prefix.
  bool handles(std::string_view path) const;
  // Whether the Authorization header value `authorization` is "Bearer <key>" (constant time).
  bool authorized(std::string_view authorization) const;
  // The answer to `method` on `path` with `query` (storage thread): JSON, or a problem
  // (404 not-found for an unknown endpoint or an uncountable id, 400 bad-request for a bad value).
  interaction_response answer(std::string_view method, std::string_view path,
                              std::string_view query);

 private:
  test_control_options opts_;
  connector& connector_;
};

}  // namespace exactly::server
