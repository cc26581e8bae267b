#pragma once
// Private: the short names the project's Asio and Beast code uses (server and client alike).

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>

#include <string_view>

namespace exactly::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
// Awaits an operation and returns its error code with its results instead of throwing.
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// A Beast string view as a standard one.
inline std::string_view to_view(beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace exactly::net
