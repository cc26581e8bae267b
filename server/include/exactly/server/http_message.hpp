#pragma once
// Plain HTTP request/response values for user routes (no Beast types in public headers).

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::server {

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // target without the query
  std::string query;   // after '?', may be empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string principal;                      // "" in open mode
  std::map<std::string, std::string> params;  // {name} segments of the pattern

  // The first header named `name` (case-insensitive), or "".
  std::string_view header(std::string_view name) const;
};

struct http_response {
  unsigned status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// Handler of a user route; runs on the storage thread, so it may use connector::db().
// An exception becomes a 500 execution-failed problem (503 for a storage failure), with its
// writes rolled back.
using route_handler = std::function<http_response(const http_request&)>;

}  // namespace exactly::server
