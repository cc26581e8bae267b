// One blocking connection to the server under test (see http_connection.hpp).
#include "http_connection.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace exactly::conformance {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string clipped(const std::string& s, std::size_t n = 400) {
  return s.size() <= n ? s : s.substr(0, n) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace

std::string answer::header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (same_name(n, name))
      return v;
  }
  return "";
}

bool answer::has_header(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return same_name(h.first, name); });
}

struct http_connection::impl {
  endpoint at;
  asio::io_context io;
  ssl::context tls_ctx{ssl::context::tls_client};
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;

  explicit impl(endpoint e) : at(std::move(e)) {
    if (!at.tls)
      return;
    try {
      tls_ctx.set_verify_mode(at.insecure ? ssl::verify_none : ssl::verify_peer);
      if (!at.ca_file.empty())
        tls_ctx.load_verify_file(at.ca_file);
      else
        tls_ctx.set_default_verify_paths();
      if (!at.client_cert_file.empty()) {
        tls_ctx.use_certificate_chain_file(at.client_cert_file);
        tls_ctx.use_private_key_file(at.client_key_file, ssl::context::pem);
      }
    } catch (const boost::system::system_error& e) {
      throw std::invalid_argument(std::string("TLS files: ") + e.what());
    }
  }

  beast::tcp_stream& lowest() {
    if (!open())
      throw std::runtime_error("the connection is closed");
    return secure ? beast::get_lowest_layer(*secure) : *plain;
  }
  bool open() const { return plain.has_value() || secure.has_value(); }
  void close() {
    plain.reset();
    secure.reset();
    buffer.clear();
  }

  void connect() {
    close();
    tcp::resolver resolver(io);
    const auto endpoints = resolver.resolve(at.host, std::to_string(at.port));
    if (at.tls)
      secure.emplace(io, tls_ctx);
    else
      plain.emplace(io);
    lowest().expires_after(at.timeout);
    lowest().connect(endpoints);
    lowest().socket().set_option(tcp::no_delay(true));
    if (secure) {
      if (!SSL_set_tlsext_host_name(secure->native_handle(), at.host.c_str()))
        throw std::runtime_error("TLS: cannot set the server name");
      if (!at.insecure)
        secure->set_verify_callback(ssl::host_name_verification(at.host));
      secure->handshake(ssl::stream_base::client);
    }
  }

  template <class Fn>
  void with_stream(Fn&& fn) {
    lowest().expires_after(at.timeout);
    if (secure)
      fn(*secure);
    else
      fn(*plain);
  }

  void write_bytes(const std::string& bytes) {
    with_stream([&](auto& s) { asio::write(s, asio::buffer(bytes)); });
  }

  answer read_one(bool head) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.skip(head);
    with_stream([&](auto& s) { http::read(s, buffer, parser); });
    auto res = parser.release();
    answer out;
    out.status = res.result_int();
    for (const auto& f : res)
      out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.body = std::move(res.body());
    if (!res.keep_alive())
      close();
    return out;
  }

  std::string serialized(const request& r) {
    http::request<http::string_body> req;
    req.method_string(r.method);
    req.target(r.target);
    req.version(11);
    req.set(http::field::host, at.host);
    for (const auto& [n, v] : r.headers)
      req.set(n, v);
    req.body() = r.body;
    if (!r.body.empty() || r.method == "PUT" || r.method == "POST")
      req.prepare_payload();
    std::ostringstream out;
    out << req;
    return out.str();
  }
};

http_connection::http_connection(endpoint at) : impl_(std::make_unique<impl>(std::move(at))) {}
http_connection::~http_connection() = default;

answer http_connection::send(const request& r) {
  const std::string bytes = impl_->serialized(r);
  for (int attempt = 0;; ++attempt) {
    const bool reused = impl_->open();
    try {
      if (!reused)
        impl_->connect();
      impl_->write_bytes(bytes);
      return impl_->read_one(r.method == "HEAD");
    } catch (const std::exception& e) {
      impl_->close();
      if (!reused || attempt > 0)
        return answer{0, {}, {}, e.what()};
    }
  }
}

std::vector<answer> http_connection::pipeline(const std::vector<request>& rs) {
  std::vector<answer> out;
  std::string bytes;
  for (const request& r : rs)
    bytes += impl_->serialized(r);
  try {
    impl_->connect();
    impl_->write_bytes(bytes);
    for (const request& r : rs) {
      if (!impl_->open()) {  // the server closed after the previous answer (Connection: close)
        out.push_back(
            answer{0,
                   {},
                   {},
                   "the server closed the connection after answer " + std::to_string(out.size())});
        break;
      }
      out.push_back(impl_->read_one(r.method == "HEAD"));
    }
  } catch (const std::exception& e) {
    out.push_back(answer{0, {}, {}, e.what()});
  }
  impl_->close();
  return out;
}

answer http_connection::raw(const std::string& bytes) {
  answer out;
  try {
    impl_->connect();
    impl_->write_bytes(bytes);
    out = impl_->read_one(false);
  } catch (const std::exception& e) {
    out = answer{0, {}, {}, e.what()};
  }
  impl_->close();
  return out;
}

std::string describe(const request& r) {
  std::string s = r.method + " " + r.target;
  for (const auto& [n, v] : r.headers)
    s += "\n    " + n + ": " + (same_name(n, "authorization") ? std::string("Bearer ***") : v);
  if (!r.body.empty())
    s += "\n    body: " + clipped(r.body);
  return s;
}

std::string describe(const answer& a) {
  if (a.status == 0)
    return "no answer: " + a.error;
  std::string s = std::to_string(a.status);
  for (const auto& [n, v] : a.headers)
    s += "\n    " + n + ": " + v;
  if (!a.body.empty())
    s += "\n    body: " + clipped(a.body);
  return s;
}

}  // namespace exactly::conformance
