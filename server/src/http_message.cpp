// Plain HTTP request values for user routes: header lookup.
#include <exactly/server/http_message.hpp>

#include <boost/beast/core/string.hpp>

namespace exactly::server {

std::string_view http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (boost::beast::iequals(k, name))
      return v;
  }
  return {};
}

}  // namespace exactly::server
