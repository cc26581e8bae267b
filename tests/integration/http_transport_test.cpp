// The client's Beast transport against a small scripted server on loopback: kept-alive
// connections are reused, a call's headers are sent, the per-destination limit holds under
// concurrent callers, and https verifies the peer (chain and host name) unless told not to.

#include <certificates.hpp>
#include <echo_server.hpp>

#include <exactly/client/http_transport.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <atomic>
#include <cstdio>
#include <thread>

namespace exactly::test {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// Answers every request "200 ok" after `delay`, on plain TCP or TLS, counting connections, the
// most requests it had in flight at once, and requests with the header "X-Test: yes".
class scripted_server {
 public:
  explicit scripted_server(std::chrono::milliseconds delay, asio::ssl::context* tls = nullptr,
                           const char* address = "127.0.0.1")
      : delay_(delay), tls_(tls), acceptor_(io_, {asio::ip::make_address(address), 0}) {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~scripted_server() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int connections() const { return connections_; }
  int requests() const { return requests_; }
  int max_in_flight() const { return max_in_flight_; }
  int marked() const { return marked_; }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(use_tuple);
      if (ec)
        co_return;
      ++connections_;
      if (tls_)
        asio::co_spawn(io_, serve_tls(std::move(socket)), asio::detached);
      else
        asio::co_spawn(io_, serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  asio::awaitable<void> serve_tls(tcp::socket socket) {
    beast::ssl_stream<beast::tcp_stream> s(std::move(socket), *tls_);
    auto [ec] = co_await s.async_handshake(asio::ssl::stream_base::server, use_tuple);
    if (!ec)
      co_await serve(std::move(s));
  }

  template <class Stream>
  asio::awaitable<void> serve(Stream s) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      auto [rec, rn] = co_await http::async_read(s, buffer, req, use_tuple);
      if (rec)
        co_return;
      ++requests_;
      if (req["X-Test"] == "yes")
        ++marked_;
      max_in_flight_ = std::max(max_in_flight_.load(), ++in_flight_);
      asio::steady_timer t(io_, delay_);
      co_await t.async_wait(use_tuple);
      --in_flight_;
      http::response<http::string_body> res{http::status::ok, 11};
      res.set(http::field::content_type, "text/plain");
      res.keep_alive(req.keep_alive());
      res.body() = "ok";
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(s, res, use_tuple);
      if (wec)
        co_return;
    }
  }

  std::chrono::milliseconds delay_;
  asio::ssl::context* tls_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<int> connections_{0}, requests_{0}, in_flight_{0}, max_in_flight_{0}, marked_{0};
};

TEST(http_transport, reuses_a_kept_alive_connection) {
  scripted_server server(std::chrono::milliseconds(0));
  auto t = client::make_beast_transport();
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
  for (int i = 0; i < 20; ++i) {
    const auto r = t->send("GET", url, "", "");
    ASSERT_FALSE(r.transport_failed) << r.error;
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, "ok");
  }
  EXPECT_EQ(server.requests(), 20);
  EXPECT_EQ(server.connections(), 1);
}

TEST(http_transport, sends_the_headers_of_a_call) {
  scripted_server server(std::chrono::milliseconds(0));
  auto t = client::make_beast_transport();
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
  client::http_call marked{"POST", url, "text/plain", "hi"};
  marked.headers = {{"X-Test", "yes"}};
  const auto answers = t->send_all({marked, {"POST", url, "text/plain", "hi"}, marked});
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[2].status, 200u);
  EXPECT_EQ(server.requests(), 3);
  EXPECT_EQ(server.marked(), 2);
}

TEST(http_transport, holds_the_per_destination_limit_under_concurrent_callers) {
  scripted_server server(std::chrono::milliseconds(30));
  auto t = client::make_beast_transport({.max_per_destination = 2});
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/x";
  std::atomic<int> answered{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      for (int j = 0; j < 3; ++j) {
        if (t->send("POST", url, "text/plain", "hi").status == 200)
          ++answered;
      }
    });
  }
  for (auto& c : callers)
    c.join();
  EXPECT_EQ(answered, 24);
  EXPECT_EQ(server.max_in_flight(), 2);  // eight callers, never more than two at once
  EXPECT_LE(server.connections(), 2);    // and their connections are pooled
}

TEST(http_transport, reports_an_unreachable_server_as_a_transport_failure) {
  std::uint16_t port = 0;
  {
    scripted_server gone(std::chrono::milliseconds(0));
    port = gone.port();
  }
  auto t = client::make_beast_transport({.connect_timeout = std::chrono::milliseconds(500)});
  const auto r = t->send("GET", "http://127.0.0.1:" + std::to_string(port) + "/x", "", "");
  EXPECT_TRUE(r.transport_failed);
  EXPECT_FALSE(r.error.empty());
  EXPECT_THROW(t->send("GET", "ftp://127.0.0.1:1/x", "", ""), std::invalid_argument);
  EXPECT_THROW(t->send("GET", "http://user@127.0.0.1:1/x", "", ""), std::invalid_argument);
  EXPECT_THROW(t->send("GET", "http://127.0.0.1:0/x", "", ""), std::invalid_argument);
}

// True when this machine can listen on the IPv6 loopback address.
bool has_ipv6_loopback() {
  asio::io_context io;
  tcp::acceptor a(io);
  beast::error_code ec;
  a.open(tcp::v6(), ec);
  if (!ec)
    a.bind({asio::ip::make_address("::1"), 0}, ec);
  return !ec;
}

TEST(http_transport, reaches_a_connector_server_on_the_ipv6_loopback) {
  if (!has_ipv6_loopback())
    GTEST_SKIP() << "this machine has no IPv6 loopback (::1): cannot listen on [::1]";
  temp_dir dir;
  server::connector c({.db_path = (dir.path() / "v6.db").string()});
  samples::register_echo_app(c);
  server::http_server s({.host = "::1", .open_mode = true}, c);
  const std::uint16_t port = s.start();
  auto t = client::make_beast_transport();
  const std::string base = "http://[::1]:" + std::to_string(port);
  const auto health = t->send("GET", base + "/healthz", "", "");
  ASSERT_FALSE(health.transport_failed) << health.error;
  EXPECT_EQ(health.status, 200u);
  // The protocol too: PUT then POST an id of the echo route through the IPv6 URL.
  const std::string url = base + "/vectors/echo/" + request_id::mint().to_string();
  const auto put = t->send("PUT", url, "application/json", R"({"status":200})");
  ASSERT_FALSE(put.transport_failed) << put.error;
  EXPECT_EQ(put.status, 201u) << put.body;
  const auto post = t->send("POST", url, "", "");
  EXPECT_EQ(post.status, 200u) << post.body;
  s.stop();
}

class https_transport : public ::testing::Test {
 protected:
  https_transport() : tls_(asio::ssl::context::tls_server) {
    make_certificate("IP:127.0.0.1", cert("good"), key("good"));
    make_certificate("DNS:elsewhere.invalid", cert("wrong-name"), key("wrong-name"));
  }
  std::string cert(const std::string& n) const { return (dir_.path() / (n + ".pem")).string(); }
  std::string key(const std::string& n) const { return (dir_.path() / (n + ".key")).string(); }
  void serve_with(const std::string& n) {
    tls_.use_certificate_chain_file(cert(n));
    tls_.use_private_key_file(key(n), asio::ssl::context::pem);
  }
  client::http_result get(const client::beast_transport_options& o, std::uint16_t port) {
    return client::make_beast_transport(o)->send(
        "GET", "https://127.0.0.1:" + std::to_string(port) + "/x", "", "");
  }

  temp_dir dir_;
  asio::ssl::context tls_;
};

TEST_F(https_transport, answers_when_the_peer_is_trusted) {
  serve_with("good");
  scripted_server server(std::chrono::milliseconds(0), &tls_);
  const auto r = get({.ca_file = cert("good")}, server.port());
  ASSERT_FALSE(r.transport_failed) << r.error;
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "ok");
}

TEST_F(https_transport, refuses_an_unknown_certificate_by_default) {
  serve_with("good");
  scripted_server server(std::chrono::milliseconds(0), &tls_);
  const auto r = get({}, server.port());  // system CAs only
  EXPECT_TRUE(r.transport_failed);
  EXPECT_NE(r.error.find("certificate verify failed"), std::string::npos) << r.error;
  EXPECT_EQ(server.requests(), 0);
}

TEST_F(https_transport, refuses_a_trusted_certificate_for_another_host) {
  serve_with("wrong-name");
  scripted_server server(std::chrono::milliseconds(0), &tls_);
  const auto r = get({.ca_file = cert("wrong-name")}, server.port());
  EXPECT_TRUE(r.transport_failed);
  EXPECT_EQ(server.requests(), 0);
}

TEST_F(https_transport, answers_an_unverified_peer_only_when_told_to) {
  serve_with("wrong-name");
  scripted_server server(std::chrono::milliseconds(0), &tls_);
  const auto r = get({.verify_peer = false}, server.port());
  ASSERT_FALSE(r.transport_failed) << r.error;
  EXPECT_EQ(r.status, 200u);
}

}  // namespace
}  // namespace exactly::test
