// The test-control interface of proto-spec §12 on the real server: off unless configured, its own
// key (never an API key, at least 16 characters) checked before a body is read, bounded clock
// moves, and when on, the clock, the sweeper and the row counts answer.

#include <echo_app.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>
#include <exactly/server/test_control.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

namespace exactly::test {
namespace {

const std::string api_key = "alice-api-key-0123456789";
const std::string control_key = "control-key-0123456789abcdef";

// An echo server whose connector decides with a test clock, the interface on with `key` ("" =
// off).
class control_server {
 public:
  explicit control_server(const std::string& key) {
    server::connector_options co;
    co.db_path = (dir_.path() / "server.db").string();
    co.clock = clock_->fn();
    connector_ = std::make_unique<server::connector>(co);
    samples::register_echo_app(*connector_);
    server::server_options so;
    so.api_keys = {{api_key, "alice"}};
    so.sweep_interval = std::chrono::hours(24);
    so.test_control.key = key;
    so.test_control.clock = clock_;
    http_ = std::make_unique<server::http_server>(so, *connector_);
    port_ = http_->start();
  }
  ~control_server() {
    if (http_)
      http_->stop();
  }

  // The whole reply to `method target` with `key` and `extra` header lines, on a fresh
  // connection the server closes after answering.
  std::string ask(const std::string& method, const std::string& target, const std::string& key,
                  const std::string& extra = "", const std::string& body = "") {
    raw_connection raw(port_);
    raw.send(method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
             "Authorization: Bearer " + key + "\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n" + extra + "\r\n" + body);
    return raw.read_all(3000);
  }
  // The JSON body of `reply`.
  static nlohmann::json body_of(const std::string& reply) {
    const auto at = reply.find("\r\n\r\n");
    return nlohmann::json::parse(at == std::string::npos ? "" : reply.substr(at + 4), nullptr,
                                 false);
  }
  std::int64_t now_ms() const { return clock_->now_ms(); }
  std::uint16_t port() const { return port_; }

 private:
  temp_dir dir_;
  std::shared_ptr<server::test_clock> clock_ = std::make_shared<server::test_clock>();
  std::unique_ptr<server::connector> connector_;
  std::unique_ptr<server::http_server> http_;
  std::uint16_t port_ = 0;
};

TEST(test_control, off_its_paths_are_unknown_routes_even_with_a_valid_api_key) {
  control_server server("");
  for (const char* target : {"/_exactly/test/clock", "/_exactly/test/rows"}) {
    const std::string r = server.ask("GET", target, api_key);
    EXPECT_NE(r.find("HTTP/1.1 404"), std::string::npos) << target << ": " << r;
  }
  const std::int64_t before = server.now_ms();
  const std::string r = server.ask("POST", "/_exactly/test/clock?advance_seconds=3600", api_key);
  EXPECT_NE(r.find("HTTP/1.1 404"), std::string::npos) << r;
  EXPECT_LT(server.now_ms() - before, 3600 * 1000);
}

TEST(test_control, a_wrong_key_is_401_before_100_continue_and_moves_nothing) {
  control_server server(control_key);
  const std::int64_t before = server.now_ms();
  for (const std::string& key : {std::string("wrong-key-0123456789"), api_key}) {
    raw_connection raw(server.port());
    raw.send(
        "POST /_exactly/test/clock?advance_seconds=3600 HTTP/1.1\r\nHost: x\r\n"
        "Authorization: Bearer " +
        key + "\r\nExpect: 100-continue\r\nContent-Length: 14\r\n\r\n");
    const std::string r = raw.read_all(3000);  // the body never comes
    EXPECT_EQ(r.find("100 Continue"), std::string::npos) << key << ": " << r;
    EXPECT_NE(r.find("HTTP/1.1 401"), std::string::npos) << key << ": " << r;
  }
  EXPECT_LT(server.now_ms() - before, 3600 * 1000);
  // The right key with the same request is answered (control: the request itself is fine).
  raw_connection raw(server.port());
  raw.send(
      "POST /_exactly/test/clock?advance_seconds=3600 HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\nAuthorization: Bearer " +
      control_key + "\r\nExpect: 100-continue\r\nContent-Length: 14\r\n\r\n");
  const std::string r = raw.read_all(3000);
  EXPECT_NE(r.find("100 Continue"), std::string::npos) << r;
}

TEST(test_control, advance_seconds_out_of_range_is_400_and_moves_nothing) {
  control_server server(control_key);
  const std::int64_t before = server.now_ms();
  for (const char* n :
       {"-1", "3155760001", "9223372036854775807", "99999999999999999999", "x", "", "5x"}) {
    const std::string r =
        server.ask("POST", std::string("/_exactly/test/clock?advance_seconds=") + n, control_key);
    EXPECT_NE(r.find("HTTP/1.1 400"), std::string::npos) << n << ": " << r;
    EXPECT_NE(r.find("bad-request"), std::string::npos) << n << ": " << r;
  }
  EXPECT_LT(server.now_ms() - before, 60 * 1000);
  // 100 years is the most, in one move and in all.
  std::string r =
      server.ask("POST", "/_exactly/test/clock?advance_seconds=3155760000", control_key);
  EXPECT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  EXPECT_GE(server.now_ms() - before, 3'155'760'000LL * 1000);
  r = server.ask("POST", "/_exactly/test/clock?advance_seconds=1", control_key);
  EXPECT_NE(r.find("HTTP/1.1 400"), std::string::npos) << r;
}

TEST(test_control, test_clock_advance_is_checked) {
  server::test_clock clock([] { return std::int64_t{1000}; });
  EXPECT_TRUE(clock.advance_ms(server::test_clock::max_offset_ms - 5));
  EXPECT_FALSE(clock.advance_ms(6));
  EXPECT_FALSE(clock.advance_ms(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(clock.now_ms(), 1000 + server::test_clock::max_offset_ms - 5);
  EXPECT_TRUE(clock.advance_ms(5));
  EXPECT_EQ(clock.now_ms(), 1000 + server::test_clock::max_offset_ms);
}

TEST(test_control, on_the_clock_moves_and_sweep_and_rows_answer) {
  control_server server(control_key);
  std::string r = server.ask("GET", "/_exactly/test/clock", control_key);
  ASSERT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  const std::int64_t start = control_server::body_of(r).value("now_ms", std::int64_t{0});
  EXPECT_GT(start, 0) << r;

  // One staged row.
  const std::string id = request_id::mint(server.now_ms()).to_string();
  r = server.ask("PUT", path_of(id), api_key, "Content-Type: application/json\r\n",
                 R"({"status":200,"reply":"x"})");
  ASSERT_NE(r.find("HTTP/1.1 201"), std::string::npos) << r;
  r = server.ask("GET", "/_exactly/test/rows", control_key);
  ASSERT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  EXPECT_EQ(control_server::body_of(r),
            (nlohmann::json{{"staged", 1}, {"executed", 0}, {"tombstone", 0}}))
      << r;

  // A day and an hour on (the staged TTL is 24 h), the sweeper expires it.
  r = server.ask("POST", "/_exactly/test/clock?advance_seconds=90000", control_key);
  ASSERT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  EXPECT_GE(control_server::body_of(r).value("now_ms", std::int64_t{0}), start + 90000LL * 1000)
      << r;
  EXPECT_GE(server.now_ms(), start + 90000LL * 1000);
  r = server.ask("POST", "/_exactly/test/sweep", control_key);
  ASSERT_NE(r.find("HTTP/1.1 200"), std::string::npos) << r;
  EXPECT_EQ(control_server::body_of(r).value("expired_staged", std::int64_t{-1}), 1) << r;
  r = server.ask("GET", "/_exactly/test/rows", control_key);
  EXPECT_EQ(control_server::body_of(r).value("staged", std::int64_t{-1}), 0) << r;

  r = server.ask("GET", "/_exactly/test/no-such-endpoint", control_key);
  EXPECT_NE(r.find("HTTP/1.1 404"), std::string::npos) << r;
}

TEST(test_control, the_server_refuses_a_short_key_or_an_api_key) {
  EXPECT_THROW(control_server{"short-key-12345"}, std::invalid_argument);  // 15 characters
  EXPECT_THROW(control_server{api_key}, std::invalid_argument);
  EXPECT_NO_THROW(control_server{"exactly-16-chars"});
}

}  // namespace
}  // namespace exactly::test
