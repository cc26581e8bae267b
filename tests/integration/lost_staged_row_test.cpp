// A staged row the server acknowledged (201) and then lost, as a crash may take back a PUT it
// committed without a flush: the client's POST meets 404 request-unknown, and the client stages
// the kept body again under the same id, then POSTs again. Counted on both sides: one execution,
// one follow-up, nothing in the error queue; and the re-PUT's refusals end in the error queue.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <thread>

namespace exactly::test {
namespace {

// Forwards every request and records its method and answer; `after` is called with each.
class recording_transport : public client::http_transport {
 public:
  using hook = std::function<void(std::string_view method, std::string_view url,
                                  std::string_view body, const client::http_result&)>;
  recording_transport(std::shared_ptr<client::http_transport> inner, hook after)
      : inner_(std::move(inner)), after_(std::move(after)) {}

  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    client::http_result r = inner_->send(method, url, content_type, body);
    {
      std::lock_guard lock(m_);
      seen_.push_back(std::string(method) + " " +
                      (r.transport_failed ? "failed" : std::to_string(r.status)));
    }
    if (after_)
      after_(method, url, body, r);
    return r;
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }

  // How many requests were "<METHOD> <status>" (or "<METHOD> failed").
  int count(const std::string& what) {
    std::lock_guard lock(m_);
    return static_cast<int>(std::count(seen_.begin(), seen_.end(), what));
  }

 private:
  std::shared_ptr<client::http_transport> inner_;
  hook after_;
  std::mutex m_;
  std::vector<std::string> seen_;
};

constexpr const char* payload = R"({"status":200,"reply":"kept"})";

class lost_staged_row : public ::testing::Test {
 protected:
  lost_staged_row() : db_((dir_.path() / "client.db").string()) {
    db_.exec(
        "CREATE TABLE results (order_id TEXT PRIMARY KEY, status INTEGER, body TEXT, n INTEGER)");
  }

  // A billing endpoint: "bill" invokes the echo route with `payload`, "bill_result" counts its
  // follow-ups in results.
  std::unique_ptr<client::endpoint> billing(echo_server& server,
                                            recording_transport::hook after = {}) {
    transport_ = std::make_shared<recording_transport>(
        client::make_beast_transport(
            {.keys = {{"127.0.0.1:" + std::to_string(server.port()), "alice-key"}}}),
        std::move(after));
    auto ep = std::make_unique<client::endpoint>(
        "billing", db_,
        client::endpoint_options{.max_attempts = 3,
                                 .retry_base = std::chrono::milliseconds(5),
                                 .retry_cap = std::chrono::milliseconds(50),
                                 .transport = transport_});
    const std::string url =
        "http://127.0.0.1:" + std::to_string(server.port()) + "/vectors/echo/{id}";
    ep->on("bill", [url](client::handler_context& ctx) {
      ctx.invoke_http(url, payload, "application/json",
                      {.type = "bill_result", .body = {{"order", "o-1"}}});
    });
    ep->on("bill_result", [](client::handler_context& ctx) {
      ctx.db()
          .prepare(
              "INSERT INTO results VALUES (?, ?, ?, 1)"
              " ON CONFLICT(order_id) DO UPDATE SET n = n + 1")
          .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status,
                    ctx.response()->body)
          .run();
    });
    return ep;
  }

  // Runs the bill's handler: its PUT staged, its invocation committed with the body it PUT.
  void commit_the_invocation(client::endpoint& ep) {
    ep.send("billing", {.type = "bill"});
    ASSERT_EQ(ep.process_due(), 1u);
    ASSERT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 1 AND"
                " CAST(body AS TEXT) = '{\"status\":200,\"reply\":\"kept\"}' AND"
                " content_type = 'application/json'"),
              1);
  }

  // Takes the staged row back from the server's database, as a crash losing its unflushed
  // commit does: no trace of the id is left.
  static void lose_the_staged_row(echo_server& server) {
    sqlite::connection s(server.db_path());
    s.exec("DELETE FROM exactly_interactions WHERE state = 1");
    ASSERT_EQ(s.changes(), 1);
  }

  void quiesce(client::endpoint& ep) {
    for (int i = 0; i < 2000; ++i) {
      ep.run_until_idle();
      if (ep.queued() == 0 && ep.pending_invocations() == 0)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "did not quiesce";
  }

  std::int64_t q(const char* sql) { return db_.query_int64(sql).value_or(-1); }

  temp_dir dir_;
  sqlite::connection db_;
  std::shared_ptr<recording_transport> transport_;
};

TEST_F(lost_staged_row, a_post_answered_404_stages_the_kept_body_again_and_executes_once) {
  echo_server server;
  auto ep = billing(server);
  commit_the_invocation(*ep);
  lose_the_staged_row(server);
  quiesce(*ep);
  EXPECT_EQ(transport_->count("POST 404"), 1);
  EXPECT_EQ(transport_->count("PUT 201"), 2);  // the handler's PUT, then the re-PUT
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND body = '{\"reply\":\"kept\"}'"),
            1);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged, 0);
  EXPECT_EQ(rows.executed, 0);
  EXPECT_EQ(rows.tombstone, 1);
}

// The id left the acceptance window between the 404 and the re-PUT: it can never be staged again.
TEST_F(lost_staged_row, a_re_put_answered_request_too_old_goes_to_the_error_queue) {
  echo_server server;
  auto ep = billing(server, [&server](std::string_view method, std::string_view, std::string_view,
                                      const client::http_result& r) {
    if (method == "POST" && r.status == 404)
      server.advance_seconds(2 * 3600);  // past the 1 h acceptance window
  });
  commit_the_invocation(*ep);
  lose_the_staged_row(server);
  quiesce(*ep);
  EXPECT_EQ(transport_->count("POST 404"), 1);
  EXPECT_EQ(transport_->count("PUT 410"), 1);
  EXPECT_EQ(transport_->count("DELETE 204"), 1);  // the id is DELETEd
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  const auto errors = ep->errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("PUT answered 410 request-too-old"), std::string::npos)
      << errors[0].error;
}

// Between the 404 and the re-PUT the id was staged and executed (as by a delayed copy of the
// original PUT and POST): the re-PUT meets 410 request-consumed, the POST replays the response.
TEST_F(lost_staged_row, a_re_put_meeting_an_executed_id_posts_again_and_replays) {
  echo_server server;
  auto ep = billing(server, [&server](std::string_view method, std::string_view url,
                                      std::string_view, const client::http_result& r) {
    if (method != "POST" || r.status != 404)
      return;
    const std::string path(url.substr(url.find("/vectors")));
    http_client c(server.port());
    ASSERT_EQ(c.request("PUT", path, payload, alice).status, 201u);
    ASSERT_EQ(c.request("POST", path, "", alice).header("exactly-once-outcome"), "executed");
  });
  commit_the_invocation(*ep);
  lose_the_staged_row(server);
  quiesce(*ep);
  EXPECT_EQ(transport_->count("POST 404"), 1);
  EXPECT_EQ(transport_->count("PUT 410"), 1);   // request-consumed
  EXPECT_EQ(transport_->count("POST 200"), 1);  // replayed
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND body = '{\"reply\":\"kept\"}'"),
            1);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged + rows.executed, 0);
  EXPECT_EQ(rows.tombstone, 1);
}

// A row committed before rows kept their body (schema version 2): nothing to stage again, so its
// 404 is the protocol fault it always was.
TEST_F(lost_staged_row, a_row_without_a_kept_body_sends_its_404_to_the_error_queue) {
  echo_server server;
  auto ep = billing(server);
  commit_the_invocation(*ep);
  db_.exec("UPDATE exactly_invocations SET body = NULL, content_type = NULL");
  lose_the_staged_row(server);
  quiesce(*ep);
  EXPECT_EQ(transport_->count("POST 404"), 1);
  EXPECT_EQ(transport_->count("PUT 201"), 1);  // the handler's only
  EXPECT_EQ(server.executions_total(), 0);
  const auto errors = ep->errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].error.find("POST answered 404 request-unknown"), std::string::npos)
      << errors[0].error;
}

}  // namespace
}  // namespace exactly::test
