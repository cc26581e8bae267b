// The benchmark's baselines must do what they claim, or the ratios mean nothing: the plain route
// writes once per request; the idempotency-key route writes once per key and principal, replays
// the stored response, refuses a reused key with another body (422) and a missing key (400), and
// deletes keys older than its window; the connector route writes once per executed id.

#include <bench_routes.hpp>
#include <echo_server.hpp>
#include <http_client.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <atomic>

namespace exactly::test {
namespace {

class bench_routes : public ::testing::Test {
 protected:
  bench_routes()
      : connector_({.db_path = (dir_.path() / "bench.db").string()}),
        http_({.api_keys = {{"k1", "alice"}, {"k2", "bob"}}}, connector_) {
    bench::install_connector_route(connector_);
    bench::install_http_routes(
        http_, connector_, {},
        {.window = std::chrono::seconds(60), .clock = [this] { return now_ms_.load(); }});
    client_.emplace(http_.start());
  }

  test_response post_idem(const std::string& key, const std::string& body,
                          const std::string& api_key = "k1") {
    std::vector<std::pair<std::string, std::string>> h = {{"Authorization", "Bearer " + api_key}};
    if (!key.empty())
      h.emplace_back("Idempotency-Key", key);
    return client_->request("POST", "/idem/write", body, h);
  }
  // Rows of `table` in the server's database, read on its storage thread.
  std::int64_t rows(const std::string& table) {
    std::int64_t n = 0;
    http_.run_on_storage(
        [&] { n = *connector_.db().query_int64("SELECT count(*) FROM " + table); });
    return n;
  }
  std::int64_t writes() { return rows("bench_writes"); }

  std::atomic<std::int64_t> now_ms_{1'000'000'000};  // the idempotency-key route's clock
  temp_dir dir_;
  server::connector connector_;
  server::http_server http_;
  std::optional<http_client> client_;
};

TEST_F(bench_routes, the_idempotency_key_route_writes_once_per_key_and_replays) {
  const auto first = post_idem("key-1", R"({"a":1})");
  EXPECT_EQ(first.status, 201u);
  const auto again = post_idem("key-1", R"({"a":1})");
  EXPECT_EQ(again.status, 201u);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(writes(), 1);
  EXPECT_EQ(post_idem("key-1", R"({"a":2})").status, 422u);  // reused with another request
  EXPECT_EQ(post_idem("", R"({"a":1})").status, 400u);
  EXPECT_EQ(post_idem(std::string(256, 'k'), R"({"a":1})").status, 400u);
  EXPECT_EQ(writes(), 1);
  EXPECT_EQ(post_idem("key-1", R"({"a":1})", "k2").status, 201u);  // keys are per principal
  EXPECT_EQ(writes(), 2);
}

TEST_F(bench_routes, the_idempotency_key_route_deletes_keys_older_than_its_window) {
  EXPECT_EQ(post_idem("key-a", R"({"a":1})").status, 201u);
  now_ms_ += 30'000;
  EXPECT_EQ(post_idem("key-b", R"({"a":1})").status, 201u);
  EXPECT_EQ(rows("idempotency_keys"), 2);  // key-a is 30 s old: kept
  EXPECT_EQ(post_idem("key-a", R"({"a":1})").status, 201u);
  EXPECT_EQ(writes(), 2);  // replayed
  now_ms_ += 31'000;
  EXPECT_EQ(post_idem("key-c", R"({"a":1})").status, 201u);
  EXPECT_EQ(rows("idempotency_keys"), 2);  // key-a, 61 s old, went as key-c was stored
  EXPECT_EQ(post_idem("key-a", R"({"a":1})").status, 201u);
  EXPECT_EQ(writes(), 4);  // an expired key's request runs again
  EXPECT_EQ(rows("idempotency_keys"), 3);
}

TEST_F(bench_routes, the_plain_route_writes_each_time_and_the_connector_route_once) {
  const std::vector<std::pair<std::string, std::string>> h = {{"Authorization", "Bearer k1"}};
  EXPECT_EQ(client_->request("POST", "/plain/p1", "{}", h).status, 200u);
  EXPECT_EQ(client_->request("POST", "/plain/p2", "{}", h).status, 200u);
  EXPECT_EQ(writes(), 2);
  const std::string path = "/bench/write/" + request_id::mint().to_string();
  EXPECT_EQ(client_->request("PUT", path, "{}", h).status, 201u);
  EXPECT_EQ(client_->request("POST", path, "", h).status, 200u);
  EXPECT_EQ(client_->request("POST", path, "", h).status, 200u);  // replayed
  EXPECT_EQ(writes(), 3);
}

}  // namespace
}  // namespace exactly::test
