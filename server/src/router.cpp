// Maps a method and path to a connector route or a user route (see router.hpp).
#include "router.hpp"

#include <exactly/common/protocol.hpp>

namespace exactly::server {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.starts_with('/'))
    path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos)
      break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

void router::add_connector_route(const std::string& route_template) {
  connector_prefixes_.push_back(
      route_template.substr(0, route_template.size() - protocol::id_placeholder.size()));
}

void router::add_user_route(std::string method, std::string_view pattern, route_handler handler,
                            bool authenticated) {
  user_route r{std::move(method), {}, std::move(handler), authenticated};
  for (std::string_view s : split_path(pattern))
    r.segments.emplace_back(s);
  user_routes_.push_back(std::move(r));
}

route_match router::match(std::string_view method, std::string_view path) const {
  route_match m;
  for (const user_route& r : user_routes_) {
    const auto segs = split_path(path);
    if (segs.size() != r.segments.size())
      continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (std::size_t i = 0; i < segs.size() && ok; ++i) {
      const std::string& want = r.segments[i];
      if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
        if (segs[i].empty())
          ok = false;
        params[want.substr(1, want.size() - 2)] = std::string(segs[i]);
      } else {
        ok = segs[i] == want;
      }
    }
    if (!ok)
      continue;
    if (r.method == method) {
      m.matched = route_match::kind::user;
      m.user = &r;
      m.params = std::move(params);
      return m;
    }
    m.matched = route_match::kind::method_not_allowed;
    m.allow += (m.allow.empty() ? "" : ", ") + r.method;
  }
  if (m.matched == route_match::kind::method_not_allowed)
    return m;

  for (const std::string& prefix : connector_prefixes_) {
    if (!path.starts_with(prefix))
      continue;
    const std::string_view id = path.substr(prefix.size());
    if (id.empty() || id.find('/') != std::string_view::npos)
      continue;
    if (method == "PUT" || method == "POST" || method == "GET" || method == "DELETE") {
      m.matched = route_match::kind::connector;
      m.route_template = prefix + std::string(protocol::id_placeholder);
      m.id = std::string(id);
    } else {
      m.matched = route_match::kind::method_not_allowed;
      m.allow = "PUT, POST, GET, DELETE";
    }
    return m;
  }
  return m;
}

}  // namespace exactly::server
