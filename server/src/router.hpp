#pragma once
// Maps a method and path to a connector route or a user route. Plain code, no I/O.

#include <exactly/server/http_message.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::server {

struct route_match {
  enum class kind { none, connector, user, method_not_allowed };
  kind matched = kind::none;
  std::string route_template;                 // connector: the template matched
  std::string id;                             // connector: the {id} segment
  const struct user_route* user = nullptr;    // user route matched
  std::map<std::string, std::string> params;  // user route {name} values
  std::string allow;                          // method_not_allowed: the Allow header value
};

struct user_route {
  std::string method;
  std::vector<std::string> segments;  // "{name}" or literal
  route_handler handler;
  bool authenticated = true;
};

class router {
 public:
  void add_connector_route(const std::string& route_template);
  void add_user_route(std::string method, std::string_view pattern, route_handler handler,
                      bool authenticated);
  route_match match(std::string_view method, std::string_view path) const;

 private:
  std::vector<std::string> connector_prefixes_;  // "/payment/authorize/" for ".../{id}"
  std::vector<user_route> user_routes_;
};

// Splits "/a/b/c" into {"a", "b", "c"}; empty segments are kept.
std::vector<std::string_view> split_path(std::string_view path);

}  // namespace exactly::server
