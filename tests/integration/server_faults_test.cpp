// Hostile and broken clients: each gets its documented answer and the server keeps serving.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/problem.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <thread>

namespace exactly::test {
namespace {

std::string problem_name(const test_response& r) {
  const auto p = parse_problem(r.body);
  return p ? std::string(p->name()) : "(not a problem: " + r.body + ")";
}

void expect_serving(echo_server& server) {
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  EXPECT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  EXPECT_EQ(c.request("POST", path_of(id), "", alice).header("exactly-once-outcome"), "executed");
}

TEST(server_faults, malformed_ids_are_refused_on_every_verb) {
  echo_server server;
  http_client c(server.port());
  const std::string v7 = request_id::mint(server.now_ms()).to_string();
  std::string upper = v7;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  const std::vector<std::string> bad = {
      "123",    upper,        "6f1c2a4e-1b2c-4d3e-8f40-123456789abc",
      v7 + "0", v7.substr(1), "%30190c6c1-7f2a-7c3e-9b1a-2f4d5e6a7b8c"};
  for (const std::string& id : bad) {
    for (const char* m : {"PUT", "POST", "GET", "DELETE"}) {
      const auto r = c.request(m, path_of(id), R"({"status":200})", alice);
      EXPECT_EQ(r.status, 400u) << m << ' ' << id;
      EXPECT_EQ(problem_name(r), "invalid-request-id") << m << ' ' << id;
    }
  }
  EXPECT_EQ(server.rows().staged + server.rows().tombstone, 0);
  expect_serving(server);
}

TEST(server_faults, oversize_body_is_413_and_never_staged) {
  echo_server server;
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  const auto r = c.request("PUT", path_of(id), std::string(4096, 'x'), alice);
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(problem_name(r), "payload-too-large");
  EXPECT_EQ(server.rows().staged, 0);
  expect_serving(server);
}

TEST(server_faults, oversize_chunked_body_is_413) {
  echo_server server;
  raw_connection raw(server.port());
  std::string chunk(2000, 'x');
  char size[16];
  std::snprintf(size, sizeof size, "%zx", chunk.size());
  raw.send("PUT " + path_of(request_id::mint(server.now_ms()).to_string()) +
           " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-key\r\n"
           "Transfer-Encoding: chunked\r\n\r\n" +
           size + "\r\n" + chunk + "\r\n0\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  EXPECT_NE(reply.find("413"), std::string::npos) << reply;
  EXPECT_NE(reply.find("payload-too-large"), std::string::npos) << reply;
  expect_serving(server);
}

TEST(server_faults, garbage_is_400_bad_request_and_closed) {
  echo_server server;
  raw_connection raw(server.port());
  raw.send("THIS IS NOT HTTP\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  EXPECT_NE(reply.find("400"), std::string::npos) << reply;
  EXPECT_NE(reply.find("bad-request"), std::string::npos) << reply;
  expect_serving(server);
}

TEST(server_faults, huge_header_is_431) {
  echo_server server;
  raw_connection raw(server.port());
  raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(32 * 1024, 'a') +
           "\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  EXPECT_NE(reply.find("431"), std::string::npos) << reply.substr(0, 200);
  EXPECT_NE(reply.find("header-too-large"), std::string::npos);
  expect_serving(server);
}

TEST(server_faults, wrong_method_is_405_with_allow) {
  echo_server server;
  http_client c(server.port());
  const auto r =
      c.request("PATCH", path_of(request_id::mint(server.now_ms()).to_string()), "", alice);
  EXPECT_EQ(r.status, 405u);
  EXPECT_EQ(problem_name(r), "method-not-allowed");
  EXPECT_EQ(r.header("allow"), "PUT, POST, GET, DELETE");
}

TEST(server_faults, missing_or_wrong_key_is_401_and_nothing_is_staged) {
  echo_server server;
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  auto r = c.request("PUT", path_of(id), R"({"status":200})");
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(problem_name(r), "unauthorized");
  EXPECT_EQ(r.header("www-authenticate"), "Bearer");
  r = c.request("PUT", path_of(id), R"({"status":200})", {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(server.rows().staged, 0);
}

TEST(server_faults, another_principal_sees_nothing_and_changes_nothing) {
  echo_server server;
  http_client c(server.port());
  const std::vector<std::pair<std::string, std::string>> bob = {
      {"Authorization", "Bearer bob-key"}, {"Content-Type", "application/json"}};
  const std::string id = request_id::mint(server.now_ms()).to_string();
  ASSERT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  for (const char* m : {"PUT", "POST", "GET", "DELETE"}) {
    const auto r = c.request(m, path_of(id), R"({"status":200})", bob);
    EXPECT_EQ(r.status, 404u) << m;
    EXPECT_EQ(problem_name(r), "request-unknown") << m;
  }
  EXPECT_EQ(server.executions(id), 0);
  EXPECT_EQ(c.request("POST", path_of(id), "", alice).header("exactly-once-outcome"), "executed");
  EXPECT_EQ(server.executions(id), 1);
}

TEST(server_faults, slow_client_is_cut_off_and_others_are_served) {
  echo_server_config cfg;
  cfg.read_timeout = std::chrono::milliseconds(300);
  cfg.idle_timeout = std::chrono::milliseconds(300);
  echo_server server(cfg);
  raw_connection slow(server.port());
  slow.send("PUT /vectors/echo/x HTTP/1.1\r\nHost: x\r\n");  // never finishes its header
  expect_serving(server);
  EXPECT_TRUE(slow.closed_within(3000));

  raw_connection slow_body(server.port());
  slow_body.send("PUT /vectors/echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
  EXPECT_TRUE(slow_body.closed_within(3000));
  expect_serving(server);
}

TEST(server_faults, idle_keep_alive_connection_is_closed_after_idle_timeout) {
  echo_server_config cfg;
  cfg.idle_timeout = std::chrono::milliseconds(300);
  echo_server server(cfg);
  raw_connection raw(server.port());
  raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(raw.closed_within(3000));
}

TEST(server_faults, pipelined_requests_are_answered_in_order) {
  echo_server server;
  raw_connection raw(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  const std::string body = R"({"status":202,"reply":"p"})";
  const std::string auth = "Authorization: Bearer alice-key\r\n";
  raw.send("PUT " + path_of(id) + " HTTP/1.1\r\nHost: x\r\n" + auth +
           "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body + "POST " + path_of(id) + " HTTP/1.1\r\nHost: x\r\n" + auth +
           "Content-Length: 0\r\n\r\nGET " + path_of(id) + " HTTP/1.1\r\nHost: x\r\n" + auth +
           "Connection: close\r\n\r\n");
  const std::string reply = raw.read_all(3000);
  const auto first = reply.find("HTTP/1.1 201");
  const auto second = reply.find("HTTP/1.1 202", first);
  const auto third = reply.find("HTTP/1.1 202", second + 1);
  ASSERT_NE(first, std::string::npos) << reply;
  ASSERT_NE(second, std::string::npos) << reply;
  ASSERT_NE(third, std::string::npos) << reply;
  EXPECT_NE(reply.find("executed"), std::string::npos);
  EXPECT_NE(reply.find("replayed"), std::string::npos);
  EXPECT_EQ(server.executions(id), 1);
}

TEST(server_faults, expect_100_continue_is_honoured) {
  echo_server server;
  raw_connection raw(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  const std::string body = R"({"status":200})";
  raw.send("PUT " + path_of(id) +
           " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice-key\r\nExpect: 100-continue\r\n"
           "Content-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n");
  const std::string interim = raw.read_all(1000);
  EXPECT_NE(interim.find("100 Continue"), std::string::npos) << interim;
  raw.send(body);
  const std::string reply = raw.read_all(1000);
  EXPECT_NE(reply.find("201"), std::string::npos) << reply;
}

TEST(server_faults, failing_logic_commits_nothing_and_stays_staged) {
  echo_server server;
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  ASSERT_EQ(c.request("PUT", path_of(id), R"({"status":200,"fail":true})", alice).status, 201u);
  for (int i = 0; i < 3; ++i) {
    const auto r = c.request("POST", path_of(id), "", alice);
    EXPECT_EQ(r.status, 500u);
    EXPECT_EQ(problem_name(r), "execution-failed");
    EXPECT_FALSE(r.has_header("exactly-once-outcome"));
  }
  EXPECT_EQ(server.executions(id), 0);  // the counting insert was rolled back each time
  EXPECT_EQ(server.rows().staged, 1);
  EXPECT_EQ(server.outbox_pending(), 0);
  EXPECT_EQ(c.request("GET", path_of(id), "", alice).status, 409u);
}

TEST(server_faults, a_throwing_parse_step_is_422_and_never_staged) {
  echo_server server;
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  const auto r = c.request("PUT", path_of(id), R"({"status":200,"parse_throws":1})", alice);
  EXPECT_EQ(r.status, 422u);
  EXPECT_EQ(problem_name(r), "invalid-payload");
  EXPECT_EQ(c.request("GET", path_of(id), "", alice).status, 404u);
}

TEST(server_faults, storage_locked_by_another_writer_is_503_and_nothing_runs) {
  echo_server_config cfg;
  cfg.busy_timeout = std::chrono::milliseconds(200);
  echo_server server(cfg);
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  ASSERT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  {
    sqlite::connection other(server.db_path());
    sqlite::transaction hold(other);  // BEGIN IMMEDIATE: the write lock, held
    const auto r = c.request("POST", path_of(id), "", alice);
    EXPECT_EQ(r.status, 503u);
    EXPECT_EQ(problem_name(r), "storage-unavailable");
    EXPECT_FALSE(r.has_header("exactly-once-outcome"));
  }
  EXPECT_EQ(server.executions(id), 0);
  EXPECT_EQ(server.rows().staged, 1);
  EXPECT_EQ(c.request("POST", path_of(id), "", alice).header("exactly-once-outcome"), "executed");
  EXPECT_EQ(server.executions(id), 1);
}

TEST(server_faults, metrics_count_what_happened) {
  echo_server server;
  http_client c(server.port());
  const std::string id = request_id::mint(server.now_ms()).to_string();
  c.request("PUT", path_of(id), R"({"status":200})", alice);
  c.request("POST", path_of(id), "", alice);
  c.request("POST", path_of(id), "", alice);
  c.request("GET", path_of("nope"), "", alice);
  const auto r = c.request("GET", "/metrics");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("exactly_executions_total 1\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("exactly_replays_total 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("exactly_problems_total{type=\"invalid-request-id\"} 1\n"),
            std::string::npos);
  EXPECT_NE(r.body.find("exactly_interactions{state=\"executed\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("exactly_request_duration_seconds_count 4\n"), std::string::npos);
  EXPECT_EQ(c.request("GET", "/healthz").body, "ok\n");
}

TEST(server_faults, metrics_can_require_a_key) {
  echo_server_config cfg;
  cfg.metrics_need_key = true;
  echo_server server(cfg);
  http_client c(server.port());
  const auto refused = c.request("GET", "/metrics");
  EXPECT_EQ(refused.status, 401u);
  EXPECT_EQ(refused.body.find("exactly_"), std::string::npos);
  EXPECT_EQ(c.request("GET", "/metrics", "", {{"Authorization", "Bearer wrong"}}).status, 401u);
  const auto r = c.request("GET", "/metrics", "", alice);
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("exactly_interactions{state=\"staged\"} 0\n"), std::string::npos);
  EXPECT_EQ(c.request("GET", "/healthz").status, 200u);  // health stays open for balancers
}

// A scrape reads the storage thread's figures at most once per metrics_max_age: scrape loops
// cannot take the storage thread from requests. Request counters stay current.
TEST(server_faults, metrics_read_the_storage_figures_at_most_once_per_max_age) {
  echo_server_config cfg;
  cfg.metrics_max_age = std::chrono::hours(1);
  echo_server server(cfg);
  http_client c(server.port());
  auto staged_in = [](const std::string& page) {
    return page.find("exactly_interactions{state=\"staged\"} 1\n") != std::string::npos;
  };
  EXPECT_FALSE(staged_in(c.request("GET", "/metrics").body));
  const std::string id = request_id::mint(server.now_ms()).to_string();
  ASSERT_EQ(c.request("PUT", path_of(id), R"({"status":200})", alice).status, 201u);
  for (int i = 0; i < 20; ++i) {
    const auto r = c.request("GET", "/metrics");
    EXPECT_FALSE(staged_in(r.body)) << "read again within the max age";
    // The first scrape and the PUT were answered before this scrape: 2 2xx responses counted.
    EXPECT_NE(
        r.body.find("exactly_http_responses_total{class=\"2xx\"} " + std::to_string(2 + i) + "\n"),
        std::string::npos)
        << r.body;
  }
  EXPECT_TRUE(staged_in(server.metrics()));  // http_server::metrics_text() reads everything now

  echo_server_config every;
  every.metrics_max_age = std::chrono::milliseconds(0);
  echo_server always(every);
  http_client a(always.port());
  EXPECT_FALSE(staged_in(a.request("GET", "/metrics").body));
  const std::string id2 = request_id::mint(always.now_ms()).to_string();
  ASSERT_EQ(a.request("PUT", path_of(id2), R"({"status":200})", alice).status, 201u);
  EXPECT_TRUE(staged_in(a.request("GET", "/metrics").body));
}

TEST(server_faults, sweeper_enforces_retention_and_is_measured) {
  echo_server server;
  http_client c(server.port());
  const std::string staged = request_id::mint(server.now_ms()).to_string();
  const std::string executed = request_id::mint(server.now_ms()).to_string();
  c.request("PUT", path_of(staged), R"({"status":200})", alice);
  c.request("PUT", path_of(executed), R"({"status":200})", alice);
  c.request("POST", path_of(executed), "", alice);
  server.advance_seconds(8 * 24 * 3600);
  const auto swept = server.sweep();
  EXPECT_EQ(swept.expired_staged, 1);
  EXPECT_EQ(swept.expired_responses, 1);
  EXPECT_EQ(swept.purged_tombstones, 0);  // tombstones outlive one more window
  EXPECT_EQ(problem_name(c.request("POST", path_of(staged), "", alice)), "request-expired");
  EXPECT_EQ(problem_name(c.request("GET", path_of(executed), "", alice)), "response-expired");
  server.advance_seconds(3601);
  EXPECT_EQ(server.sweep().purged_tombstones, 2);
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged + rows.executed + rows.tombstone, 0);
  // Purged ids are too old to stage again.
  EXPECT_EQ(problem_name(c.request("PUT", path_of(staged), R"({"status":200})", alice)),
            "request-too-old");
  EXPECT_NE(server.metrics().find("exactly_sweeper_deletions_total{kind=\"tombstone_purged\"} 2"),
            std::string::npos);
}

TEST(server_faults, graceful_stop_finishes_and_closes_idle_connections) {
  echo_server server;
  raw_connection idle(server.port());
  idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(idle.read_all(300).find("200"), std::string::npos);
  const auto t0 = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(idle.closed_within(1000));
  EXPECT_THROW(raw_connection(server.port()).send("x"), std::runtime_error);
}

}  // namespace
}  // namespace exactly::test
