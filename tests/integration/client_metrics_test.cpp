// The client runtime's metrics against the real connector on loopback: requests counted by verb
// and answer as many as the server answered, handler attempts by outcome as many as ran, the
// database gauges equal to the rows, and the same text served at /metrics.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/database.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

// The sum of the samples of every series in `text` whose line starts with `name` and holds each
// of `labels` (e.g. `verb="PUT"`); -1 when there is none.
double sum_of(const std::string& text, const std::string& name,
              const std::vector<std::string>& labels = {}) {
  std::istringstream in(text);
  std::string line;
  double sum = 0;
  bool found = false;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0)
      continue;
    bool all = true;
    for (const auto& l : labels)
      all = all && line.find(l) != std::string::npos;
    if (!all)
      continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
    found = true;
  }
  return found ? sum : -1;
}

// Polls `pred` until it holds or a minute passes (the machine may be busy); its last value.
template <class F>
bool within_a_minute(F pred) {
  for (int i = 0; i < 6000 && !pred(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return pred();
}

class client_metrics : public ::testing::Test {
 protected:
  client_metrics() : db_((dir_.path() / "client.db").string()) {
    db_.exec("CREATE TABLE results (order_id TEXT PRIMARY KEY, status INTEGER)");
  }

  std::int64_t q(const char* sql) { return db_.query_int64(sql).value_or(-1); }

  // A billing endpoint invoking the echo route once per bill; "broken" messages always throw.
  client::runtime::setup_fn setup(std::uint16_t port) {
    std::shared_ptr<client::http_transport> transport = client::make_beast_transport(
        {.keys = {{"127.0.0.1:" + std::to_string(port), "alice-key"}}});
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/vectors/echo/{id}";
    return [transport, url](sqlite::connection& db) {
      std::vector<std::unique_ptr<client::endpoint>> eps;
      eps.push_back(std::make_unique<client::endpoint>(
          "billing", db,
          client::endpoint_options{.max_attempts = 3,
                                   .retry_base = std::chrono::milliseconds(1),
                                   .retry_cap = std::chrono::milliseconds(5),
                                   .transport = transport}));
      eps[0]->on("bill", [url](client::handler_context& ctx) {
        ctx.invoke_http(url, R"({"status":200})", "application/json",
                        {.type = "bill_result", .body = ctx.incoming().body});
      });
      eps[0]->on("bill_result", [](client::handler_context& ctx) {
        ctx.db()
            .prepare("INSERT INTO results VALUES (?, ?)")
            .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status)
            .run();
      });
      eps[0]->on("broken", [](client::handler_context&) { throw std::runtime_error("broken"); });
      // An endpoint with nothing queued still shows its gauges, at zero.
      eps.push_back(std::make_unique<client::endpoint>("idle", db));
      return eps;
    };
  }

  temp_dir dir_;
  sqlite::connection db_;
};

TEST_F(client_metrics, count_the_requests_attempts_and_rows_of_a_real_run) {
  // One worker and room to stage every PUT: each step is sent once, so the counts are exact.
  echo_server server({.max_staged_per_principal = 10000});
  constexpr int bills = 6;
  constexpr int broken = 2;
  client::runtime rt((dir_.path() / "client.db").string(), {}, setup(server.port()),
                     {.metrics_address = "127.0.0.1:0"});
  rt.start();
  ASSERT_NE(rt.metrics_port(), 0);
  {
    client::endpoint sender("sender", db_);
    for (int i = 0; i < bills; ++i)
      sender.send("billing", {.type = "bill", .body = {{"order", "o-" + std::to_string(i)}}});
    for (int i = 0; i < broken; ++i)
      sender.send("billing", {.type = "broken", .body = {{"n", i}}});
  }
  rt.notify();
  ASSERT_TRUE(within_a_minute([&] {
    return q("SELECT count(*) FROM results") == bills &&
           q("SELECT count(*) FROM exactly_invocations") == 0 &&
           q("SELECT count(*) FROM exactly_error_queue") == broken;
  }));
  rt.stop();  // no request is sent after this

  const std::string text = rt.metrics_text();
  SCOPED_TRACE(text);
  const std::string count = "exactly_client_request_duration_seconds_count";
  // Each bill: PUT, POST (its follow-up runs with the POST's answer: no GET), DELETE. Nothing
  // failed on the way.
  for (const char* verb : {"PUT", "POST", "DELETE"})
    EXPECT_EQ(sum_of(text, count, {std::string("verb=\"") + verb + "\""}), bills) << verb;
  EXPECT_EQ(sum_of(text, count, {"verb=\"GET\""}), -1);
  EXPECT_EQ(sum_of(text, count, {"answer=\"created\"", "verb=\"PUT\""}), bills);
  EXPECT_EQ(sum_of(text, count, {"answer=\"no_answer\""}), -1);
  // Every request in the histogram's +Inf bucket, and as many as the server answered.
  EXPECT_EQ(sum_of(text, "exactly_client_request_duration_seconds_bucket", {"le=\"+Inf\""}),
            3 * bills);
  EXPECT_TRUE(within_a_minute([&] {
    return sum_of(server.metrics(), "exactly_request_duration_seconds_count") == 3 * bills;
  }));
  EXPECT_GT(sum_of(text, "exactly_client_request_duration_seconds_sum"), 0);

  // Handler attempts: each bill and each follow-up once; each broken message 2 failures, then
  // the error queue.
  const std::string attempts = "exactly_client_handler_attempts_total";
  EXPECT_EQ(sum_of(text, attempts, {"endpoint=\"billing\"", "outcome=\"committed\""}), 2 * bills);
  EXPECT_EQ(sum_of(text, attempts, {"outcome=\"failed\""}), 2 * broken);
  EXPECT_EQ(sum_of(text, attempts, {"outcome=\"error_queued\""}), broken);

  // Gauges read from the database now.
  EXPECT_EQ(sum_of(text, "exactly_client_error_queue_messages", {"endpoint=\"billing\""}),
            q("SELECT count(*) FROM exactly_error_queue WHERE endpoint = 'billing'"));
  EXPECT_EQ(sum_of(text, "exactly_client_error_queue_messages", {"endpoint=\"idle\""}), 0);
  EXPECT_EQ(sum_of(text, "exactly_client_queue_messages", {"endpoint=\"billing\""}), 0);
  EXPECT_EQ(sum_of(text, "exactly_client_queue_messages", {"endpoint=\"idle\"", "status=\"due\""}),
            0);
  for (const char* state :
       {"post_pending", "restage_pending", "awaiting_follow_up", "delete_pending"})
    EXPECT_EQ(sum_of(text, "exactly_client_invocations", {std::string("\"") + state + "\""}), 0);
  EXPECT_EQ(sum_of(text, "exactly_client_metrics_database_errors_total"), 0);

  // A message queued now shows at once, due; the served text says the same.
  client::endpoint("sender", db_).send("idle", {.type = "x"});
  http_client scraper(static_cast<std::uint16_t>(rt.metrics_port()));
  const auto served = scraper.request("GET", "/metrics");
  ASSERT_EQ(served.status, 200);
  EXPECT_EQ(
      sum_of(served.body, "exactly_client_queue_messages", {"endpoint=\"idle\"", "status=\"due\""}),
      1);
  EXPECT_EQ(sum_of(served.body, count, {"verb=\"PUT\""}), bills);
  EXPECT_EQ(sum_of(served.body, "exactly_client_error_queue_messages", {"endpoint=\"billing\""}),
            broken);
}

// A publishing turn that a follow-up's refusal fails after another follow-up committed its
// savepoint: nothing of the turn commits, so that follow-up is not counted there; it is counted
// once, when it commits in the batch its message then runs in.
TEST_F(client_metrics, count_a_follow_up_committed_only_once_its_transaction_is) {
  echo_server server({.max_staged_per_principal = 10000});
  db_.exec(
      "CREATE TRIGGER no_big AFTER INSERT ON results WHEN NEW.order_id = 'o-big'"
      " BEGIN SELECT RAISE(ROLLBACK, 'too big'); END");
  client::runtime rt((dir_.path() / "client.db").string(), {}, setup(server.port()));
  {
    client::endpoint sender("sender", db_);
    database_transaction tx(db_);  // one batch, one publishing turn: o-0's follow-up runs first
    for (const char* order : {"o-0", "o-big"})
      sender.send("billing", {.type = "bill", .body = {{"order", order}}});
    tx.commit();
  }
  rt.start();
  ASSERT_TRUE(within_a_minute([&] {
    return q("SELECT count(*) FROM results") == 1 &&
           q("SELECT count(*) FROM exactly_invocations") == 0 &&
           q("SELECT count(*) FROM exactly_error_queue") == 1;
  }));
  rt.stop();
  const std::string text = rt.metrics_text();
  SCOPED_TRACE(text);
  const std::string attempts = "exactly_client_handler_attempts_total";
  EXPECT_EQ(sum_of(text, attempts, {"outcome=\"committed\""}), 3);  // two bills, o-0's follow-up
  EXPECT_EQ(sum_of(text, attempts, {"outcome=\"failed\""}), 2);
  EXPECT_EQ(sum_of(text, attempts, {"outcome=\"error_queued\""}), 1);
}

TEST_F(client_metrics, are_not_served_unless_asked) {
  echo_server server;
  client::runtime rt((dir_.path() / "client.db").string(), {}, setup(server.port()));
  rt.start();
  EXPECT_EQ(rt.metrics_port(), 0);
  // The text is there all the same, the gauges at zero.
  EXPECT_EQ(
      sum_of(rt.metrics_text(), "exactly_client_error_queue_messages", {"endpoint=\"billing\""}),
      0);
}

}  // namespace
}  // namespace exactly::test
