#include "http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

namespace exactly::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string test_response::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

bool test_response::has_header(const std::string& name) const {
  return headers.count(name) > 0;
}

struct http_client::impl {
  std::uint16_t port;
  asio::io_context io;
  std::optional<asio::ip::tcp::socket> socket;
  beast::flat_buffer buffer;

  void connect() {
    socket.emplace(io);
    socket->connect({asio::ip::make_address("127.0.0.1"), port});
    socket->set_option(asio::ip::tcp::no_delay(true));
    buffer.clear();
  }

  test_response once(const http::request<http::string_body>& req) {
    if (!socket)
      connect();
    http::write(*socket, req);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.skip(req.method() == http::verb::head);
    http::read(*socket, buffer, parser);
    auto res = parser.release();
    test_response out;
    out.status = res.result_int();
    for (const auto& f : res) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    if (!res.keep_alive())
      socket.reset();
    return out;
  }
};

http_client::http_client(std::uint16_t port) : impl_(std::make_unique<impl>()) {
  impl_->port = port;
}
http_client::~http_client() = default;

test_response http_client::request(
    const std::string& method, const std::string& target, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  req.body() = body;
  req.prepare_payload();
  try {
    return impl_->once(req);
  } catch (const boost::system::system_error&) {
    impl_->socket.reset();  // a kept-alive connection closed by the server: retry once, fresh
    return impl_->once(req);
  }
}

raw_connection::raw_connection(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("raw_connection: connect failed");
  }
}

raw_connection::~raw_connection() {
  if (fd_ >= 0)
    ::close(fd_);
}

void raw_connection::send(const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0)
      throw std::runtime_error("raw_connection: send failed");
    off += static_cast<std::size_t>(n);
  }
}

std::string raw_connection::read_all(int timeout_ms) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0)
      return out;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0)
      return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string raw_connection::read_exactly(std::size_t n, int timeout_ms) {
  std::string out;
  char buf[64 * 1024];
  while (out.size() < n) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0)
      return out;
    const ssize_t r = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
    if (r <= 0)
      return out;
    out.append(buf, static_cast<std::size_t>(r));
  }
  return out;
}

void raw_connection::shutdown_send() {
  ::shutdown(fd_, SHUT_WR);
}

bool raw_connection::closed_within(int timeout_ms) {
  char buf[4096];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0)
      return false;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0)
      return true;
  }
}

}  // namespace exactly::test
