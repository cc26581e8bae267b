#include <exactly/client/http_transport.hpp>
#include <exactly/common/problem.hpp>
#include <exactly/common/protocol.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <map>
#include <optional>
#include <stdexcept>

namespace exactly::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct parsed_url {
  std::string host, port, target;
};

parsed_url parse_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme))
    throw std::invalid_argument("only http:// URLs: " + std::string(url));
  url.remove_prefix(scheme.size());
  const auto slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos || slash == std::string_view::npos) {
    throw std::invalid_argument("URL needs host:port and a path: " + std::string(url));
  }
  return {std::string(authority.substr(0, colon)), std::string(authority.substr(colon + 1)),
          std::string(url.substr(slash))};
}

class beast_transport final : public http_transport {
 public:
  explicit beast_transport(beast_transport_options o) : opts_(std::move(o)) {}

  http_result send(std::string_view method, std::string_view url, std::string_view content_type,
                   std::string_view body) override {
    const parsed_url u = parse_url(url);
    const std::string key = u.host + ":" + u.port;
    http::request<http::string_body> req;
    req.method_string(method);
    req.target(u.target);
    req.version(11);
    req.set(http::field::host, key);
    for (const auto& d : opts_.keys) {
      if (d.host_port == key)
        req.set(http::field::authorization, "Bearer " + d.bearer);
    }
    if (!content_type.empty())
      req.set(http::field::content_type, content_type);
    req.body() = std::string(body);
    req.prepare_payload();
    // A kept-alive connection may have been closed by the server: one fresh retry, for a
    // connection that failed before any byte of the answer arrived.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = connections_.count(key) > 0;
      http_result r = exchange(key, u, req);
      if (!r.transport_failed || !reused)
        return r;
    }
    return exchange(key, u, req);
  }

 private:
  struct connection {
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    explicit connection(asio::io_context& io) : stream(io) {}
  };

  http_result failed(const std::string& key, const beast::error_code& ec) {
    connections_.erase(key);
    http_result r;
    r.transport_failed = true;
    r.error = ec.message();
    return r;
  }

  http_result exchange(const std::string& key, const parsed_url& u,
                       const http::request<http::string_body>& req) {
    beast::error_code ec;
    auto it = connections_.find(key);
    if (it == connections_.end()) {
      auto c = std::make_unique<connection>(io_);
      tcp::resolver resolver(io_);
      const auto endpoints = resolver.resolve(u.host, u.port, ec);
      if (ec)
        return failed(key, ec);
      c->stream.expires_after(opts_.connect_timeout);
      c->stream.async_connect(endpoints,
                              [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
      run();
      if (ec)
        return failed(key, ec);
      c->stream.socket().set_option(tcp::no_delay(true), ec);
      it = connections_.emplace(key, std::move(c)).first;
    }
    connection& c = *it->second;
    c.stream.expires_after(opts_.request_timeout);
    http::async_write(c.stream, req, [&](beast::error_code e, std::size_t) { ec = e; });
    run();
    if (ec)
      return failed(key, ec);
    http::response<http::string_body> res;
    http::async_read(c.stream, c.buffer, res, [&](beast::error_code e, std::size_t) { ec = e; });
    run();
    if (ec)
      return failed(key, ec);
    http_result r;
    r.status = res.result_int();
    r.content_type = std::string(res[http::field::content_type]);
    r.outcome = std::string(res[protocol::outcome_header]);
    r.body = std::move(res.body());
    if (!res.keep_alive())
      connections_.erase(key);
    return r;
  }

  void run() {
    io_.restart();
    io_.run();
  }

  beast_transport_options opts_;
  asio::io_context io_;
  std::map<std::string, std::unique_ptr<connection>> connections_;
};

}  // namespace

answer http_result::facts() const {
  answer a;
  a.transport_failed = transport_failed;
  a.status = status;
  a.has_outcome = !outcome.empty();
  return a;
}

std::unique_ptr<http_transport> make_beast_transport(beast_transport_options opts) {
  return std::make_unique<beast_transport>(std::move(opts));
}

}  // namespace exactly::client
