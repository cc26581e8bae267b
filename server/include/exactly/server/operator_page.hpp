#pragma once
// The optional operator page (off by default): a read-only HTML page at GET /_exactly/operator
// with the metrics at a glance, the interactions in flight, recent executions, the outbox and
// the dead letters (docs/operator-page.md).

#include <cstddef>
#include <string>

namespace exactly::server {

struct operator_page_options {
  // Off by default: the page's path is then an ordinary unknown route.
  bool enabled = false;
  // The secret a browser sends as the password of HTTP Basic authentication (any user name), or
  // a tool as "Authorization: Bearer <key>". At least 16 characters, and none of the server's
  // API keys nor its test-control key (the http_server refuses it otherwise).
  std::string key{};
  // Rows each table shows at most; the page says how many more there are. At least 1.
  std::size_t max_rows = 100;
};

}  // namespace exactly::server
