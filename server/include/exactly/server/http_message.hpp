#pragma once
// Plain HTTP request/response values for user routes (no Beast types in public headers).

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

}  // namespace exactly::server
