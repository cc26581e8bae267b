// Strict HTTP and the connection budget: Host, Transfer-Encoding, the spec's check order before
// any body is read, the read deadline of kept-alive requests, and the connection cap.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace exactly::test {
namespace {

const std::string auth = "Authorization: Bearer alice-key\r\n";

// The value of the unlabelled counter `name` in the server's /metrics text, -1 when absent.
std::int64_t counter(echo_server& server, const std::string& name) {
  const std::string m = server.metrics();
  const auto at = m.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stoll(m.substr(at + name.size() + 2));
}

std::string fresh_path(echo_server& server) {
  return path_of(request_id::mint(server.now_ms()).to_string());
}

// Occurrences of an HTTP status line in `reply`.
std::size_t responses_in(const std::string& reply) {
  std::size_t n = 0;
  for (auto at = reply.find("HTTP/1.1 "); at != std::string::npos;
       at = reply.find("HTTP/1.1 ", at + 1))
    ++n;
  return n;
}

TEST(server_strict_http, http11_without_host_is_400_and_closed) {
  echo_server server;
  raw_connection raw(server.port());
  raw.send("GET /healthz HTTP/1.1\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  EXPECT_NE(reply.find("HTTP/1.1 400"), std::string::npos) << reply;
  EXPECT_NE(reply.find("bad-request"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Host"), std::string::npos) << reply;

  raw_connection old(server.port());  // HTTP/1.0 has no Host requirement
  old.send("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_NE(old.read_all(3000).find(" 200 "), std::string::npos);
}

// A Transfer-Encoding whose last coding is not chunked has no length this server can read: the
// chunk bytes must not parse as a next request (smuggled behind a proxy that reads it chunked).
TEST(server_strict_http, transfer_encoding_not_ending_in_chunked_is_400_and_closed) {
  echo_server server;
  for (const char* coding : {"gzip", "chunked, gzip", "identity"}) {
    raw_connection raw(server.port());
    const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    char size[16];
    std::snprintf(size, sizeof size, "%zx", smuggled.size());
    raw.send("PUT " + fresh_path(server) + " HTTP/1.1\r\nHost: x\r\n" + auth +
             "Transfer-Encoding: " + coding + "\r\n\r\n" + size + "\r\n" + smuggled +
             "\r\n0\r\n\r\n");
    const std::string reply = raw.read_all(3000);
    EXPECT_NE(reply.find("HTTP/1.1 400"), std::string::npos) << coding << ": " << reply;
    EXPECT_NE(reply.find("bad-request"), std::string::npos) << coding << ": " << reply;
    EXPECT_EQ(responses_in(reply), 1u) << coding << ": " << reply;  // nothing smuggled answered
  }
  EXPECT_EQ(server.rows().staged, 0);
}

// 401 comes first (spec §6): from the header alone, before a body byte is read or sent.
TEST(server_strict_http, an_unauthenticated_body_is_never_read) {
  echo_server server;
  for (const char* length : {"500", "100000000"}) {  // within and far over the body limit
    raw_connection raw(server.port());
    raw.send("PUT " + fresh_path(server) + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + length +
             "\r\n\r\n");  // the body never comes: the answer cannot wait for it
    const std::string reply = raw.read_all(3000);
    EXPECT_NE(reply.find("HTTP/1.1 401"), std::string::npos) << length << ": " << reply;
    EXPECT_NE(reply.find("unauthorized"), std::string::npos) << length << ": " << reply;
    EXPECT_NE(reply.find("WWW-Authenticate: Bearer"), std::string::npos) << reply;
  }
}

TEST(server_strict_http, expect_100_continue_is_never_sent_before_authentication) {
  echo_server server;
  raw_connection raw(server.port());
  raw.send("PUT " + fresh_path(server) +
           " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nExpect: 100-continue\r\n"
           "Content-Length: 14\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  EXPECT_EQ(reply.find("100 Continue"), std::string::npos) << reply;
  EXPECT_NE(reply.find("HTTP/1.1 401"), std::string::npos) << reply;
}

// Route, method and id syntax come before the body size, and the size is judged from the
// Content-Length at once, without waiting for the body.
TEST(server_strict_http, the_check_order_holds_before_the_body_size) {
  echo_server server;  // body limit 1024
  const auto first_answer = [&](const std::string& method, const std::string& target) {
    raw_connection raw(server.port());
    raw.send(method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + auth +
             "Content-Length: 5000\r\n\r\n");
    return raw.read_all(3000);
  };
  std::string r = first_answer("PUT", "/no/such/route");
  EXPECT_NE(r.find("HTTP/1.1 404"), std::string::npos) << r;
  EXPECT_NE(r.find("not-found"), std::string::npos) << r;
  r = first_answer("PATCH", fresh_path(server));
  EXPECT_NE(r.find("HTTP/1.1 405"), std::string::npos) << r;
  r = first_answer("PUT", path_of("123"));
  EXPECT_NE(r.find("HTTP/1.1 400"), std::string::npos) << r;
  EXPECT_NE(r.find("invalid-request-id"), std::string::npos) << r;
  r = first_answer("PUT", fresh_path(server));
  EXPECT_NE(r.find("HTTP/1.1 413"), std::string::npos) << r;
  EXPECT_NE(r.find("payload-too-large"), std::string::npos) << r;
}

// After a request on a kept-alive connection, the next one may start after up to the idle
// deadline, but once its first byte arrived it has the read deadline, not the idle one.
TEST(server_strict_http, a_kept_alive_request_has_the_read_deadline_from_its_first_byte) {
  echo_server_config cfg;
  cfg.read_timeout = std::chrono::milliseconds(300);
  cfg.idle_timeout = std::chrono::milliseconds(10000);
  echo_server server(cfg);
  raw_connection raw(server.port());
  raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(raw.read_all(500).find(" 200 "), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // idle: longer than the read one
  raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(raw.read_all(500).find(" 200 "), std::string::npos);  // still open, served
  raw.send("GET /healthz HTTP/1.1\r\n");  // trickles: never finishes its header
  EXPECT_TRUE(raw.closed_within(3000));   // 300 ms read deadline, not the 10 s idle one
}

TEST(server_strict_http, connections_over_the_cap_are_closed_at_once_and_counted) {
  echo_server_config cfg;
  cfg.max_connections = 2;
  echo_server server(cfg);
  auto held = std::make_unique<raw_connection>(server.port());
  raw_connection other(server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both accepted
  raw_connection third(server.port());
  EXPECT_TRUE(third.closed_within(3000));
  EXPECT_FALSE(other.closed_within(200));  // those within the cap are served
  other.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(other.read_all(500).find(" 200 "), std::string::npos);
  EXPECT_EQ(counter(server, "exactly_connections_refused_total"), 1);

  held.reset();  // a place frees once the server sees the close
  EXPECT_TRUE(eventually([&] {
    raw_connection next(server.port());
    next.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return next.read_all(1000).find(" 200 ") != std::string::npos;
  }));
}

TEST(server_strict_http, a_connection_limit_of_zero_is_refused_at_construction) {
  echo_server_config cfg;
  cfg.max_connections = 0;
  EXPECT_THROW(echo_server{cfg}, std::invalid_argument);
  cfg.max_connections = 1;
  cfg.max_tls_handshakes = 0;
  EXPECT_THROW(echo_server{cfg}, std::invalid_argument);
}

}  // namespace
}  // namespace exactly::test
