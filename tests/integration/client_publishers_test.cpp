// The publishers of one runtime over SQLite, where due steps are read outside the write lock:
// each step is sent by one of them, counted by the requests that reached the transport; they are
// woken for the steps a failed batch committed, and wake the handlers for the follow-ups they
// queue.
#include <counting_transport.hpp>
#include <echo_server.hpp>

#include <exactly/client/runtime.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

echo_server_config roomy() {
  echo_server_config cfg;
  cfg.max_staged_per_principal = 1000;
  return cfg;
}

// An echo server, a transport counting the requests that reached it, and a client database file
// whose "billed" table the "billing" endpoint's follow-up handler fills.
class client_publishers : public ::testing::Test {
 protected:
  client_publishers() { conn_.exec("CREATE TABLE billed (message_id TEXT NOT NULL)"); }

  std::int64_t count(const char* sql) { return conn_.query_int64(sql).value_or(-1); }
  // The "billing" endpoint on `wdb` with `opts` (the counting transport unless one is given):
  // "bill" invokes the echo server after `pause`, and its follow-up "billed" records its message
  // id.
  std::unique_ptr<client::endpoint> billing(sqlite::connection& wdb,
                                            std::chrono::milliseconds pause = {},
                                            client::endpoint_options opts = {}) {
    if (!opts.transport)
      opts.transport = transport_;
    auto ep = std::make_unique<client::endpoint>("billing", wdb, std::move(opts));
    ep->on("bill", [url = url_, pause](client::handler_context& ctx) {
      std::this_thread::sleep_for(pause);
      ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "billed"});
    });
    ep->on("billed", [](client::handler_context& ctx) {
      ctx.db().prepare("INSERT INTO billed VALUES (?)").bind(1, ctx.incoming().id).run();
    });
    return ep;
  }

  // One "bill" through a runtime of one handlers' worker and one publisher whose idle poll is
  // 30 s, its POST answered 1 s late: by then the handlers' worker, its batch committed and its
  // next turn finding nothing due, waits out that poll unless the publisher wakes it. `adjust`
  // sets up the endpoint made by billing(); true once `sql` counts 1, within 15 s.
  bool one_bill_reaches(const std::function<void(client::endpoint&)>& adjust,
                        client::endpoint_options opts, const char* sql);

  echo_server server_{roomy()};
  const std::string url_ = echo_url(server_.port());
  std::shared_ptr<counting_transport> transport_ = counting_echo_transport(server_.port());
  temp_dir dir_;
  const std::string path_ = (dir_.path() / "client.db").string();
  sqlite::connection conn_{path_};
  const database db_{conn_};
};

TEST_F(client_publishers, the_workers_of_a_runtime_never_send_one_post_twice) {
  constexpr int n = 120;
  {
    database_transaction tx(db_);
    for (int i = 0; i < n; ++i)
      client::send_in_transaction(db_, "billing", {.id = std::to_string(i), .type = "bill"});
    tx.commit();
  }
  // Three workers, each handling and publishing in turn, in batches of 8: their publishing turns
  // overlap and read the same due steps.
  client::runtime rt(path_, {},
                     [&](sqlite::connection& wdb) {
                       std::vector<std::unique_ptr<client::endpoint>> eps;
                       eps.push_back(billing(wdb));
                       return eps;
                     },
                     {.workers = 3, .idle_poll = std::chrono::milliseconds(1), .batch = 8});
  rt.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((count("SELECT count(*) FROM billed") < n ||
          count("SELECT count(*) FROM exactly_invocations") > 0) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rt.stop();

  EXPECT_EQ(count("SELECT count(*) FROM billed"), n);
  EXPECT_EQ(count("SELECT count(DISTINCT message_id) FROM billed"), n);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server_.executions_total(), n);
  const std::map<std::string, int> posts = transport_->posts();
  EXPECT_EQ(posts.size(), static_cast<std::size_t>(n));
  int twice = 0;
  for (const auto& [posted, times] : posts)
    twice += times > 1 ? 1 : 0;
  EXPECT_EQ(twice, 0) << "of " << posts.size() << " POSTed ids, " << twice
                      << " went out more than once";
}

// A batch refused as a whole whose messages then run alone: one commits its invocation, the other
// is refused again and so is the attempt charged to it, so process_due throws. The handlers'
// workers still wake the publisher, whose idle poll (30 s) would otherwise hold the POST back,
// and they do not wake each other: each pauses after its failed turn.
TEST_F(client_publishers, are_woken_for_what_a_batch_committed_before_it_threw) {
  conn_.exec(
      "CREATE TABLE refused (n BIGINT);"
      "CREATE TRIGGER no_refused BEFORE INSERT ON refused"
      " BEGIN SELECT RAISE(ROLLBACK, 'refused'); END;");
  client::endpoint outside("billing", db_, {});  // makes the queue's tables
  conn_.exec(
      "CREATE TRIGGER no_retries BEFORE UPDATE OF attempts ON exactly_queue"
      " BEGIN SELECT RAISE(ABORT, 'no retries either'); END");
  {
    database_transaction tx(db_);
    client::send_in_transaction(db_, "billing", {.id = "bill-1", .type = "bill"});
    client::send_in_transaction(db_, "billing", {.id = "refuse-1", .type = "refuse"});
    tx.commit();
  }
  std::atomic<int> refusals = 0;
  client::runtime rt(
      path_, {},
      [&](sqlite::connection& wdb) {
        std::vector<std::unique_ptr<client::endpoint>> eps;
        // The publisher's first turn, which finds nothing due, ends long before "bill" commits
        // (in the batch, then alone: two seconds); the publisher then waits out its idle poll.
        eps.push_back(billing(wdb, std::chrono::milliseconds(1000)));
        eps[0]->on("refuse", [&refusals](client::handler_context& ctx) {
          ++refusals;
          ctx.db().exec("INSERT INTO refused VALUES (1)");
        });
        return eps;
      },
      {.workers = 2, .idle_poll = std::chrono::seconds(30), .batch = 8, .publishers = 1});
  rt.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (count("SELECT count(*) FROM billed") < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(count("SELECT count(*) FROM billed"), 1) << "the publisher was not woken";
  EXPECT_EQ(server_.executions_total(), 1);
  EXPECT_EQ(transport_->posts().size(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM exactly_queue WHERE message_id = 'refuse-1'"), 1);
  EXPECT_EQ(count("SELECT attempts FROM exactly_queue WHERE message_id = 'refuse-1'"), 0);
  // Each worker's failed turn runs the refused handler at most twice (in a batch and alone):
  // woken by the other's failure, they would run it again and again.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GE(refusals, 2);
  EXPECT_LE(refusals, 4);
  rt.stop();
}

// Answers its POSTs `delay` late.
class late_posts final : public client::http_transport {
 public:
  late_posts(std::shared_ptr<client::http_transport> inner, std::chrono::milliseconds delay)
      : inner_(std::move(inner)), delay_(delay) {}
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    if (method == "POST")
      std::this_thread::sleep_for(delay_);
    return inner_->send(method, url, content_type, body);
  }
  std::vector<client::http_result> send_all(const std::vector<client::http_call>& calls) override {
    if (std::any_of(calls.begin(), calls.end(),
                    [](const client::http_call& c) { return c.method == "POST"; }))
      std::this_thread::sleep_for(delay_);
    return inner_->send_all(calls);
  }
  std::future<client::http_result> start(const client::http_call& call) override {
    return inner_->start(call);  // the PUTs of a handler
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }

 private:
  std::shared_ptr<client::http_transport> inner_;
  std::chrono::milliseconds delay_;
};

bool client_publishers::one_bill_reaches(const std::function<void(client::endpoint&)>& adjust,
                                         client::endpoint_options opts, const char* sql) {
  {
    database_transaction tx(db_);
    client::send_in_transaction(db_, "billing", {.id = "bill-1", .type = "bill"});
    tx.commit();
  }
  opts.transport = std::make_shared<late_posts>(transport_, std::chrono::milliseconds(1000));
  client::runtime rt(
      path_, {},
      [&](sqlite::connection& wdb) {
        std::vector<std::unique_ptr<client::endpoint>> eps;
        eps.push_back(billing(wdb, {}, opts));
        adjust(*eps[0]);
        return eps;
      },
      {.workers = 1, .idle_poll = std::chrono::seconds(30), .batch = 8, .publishers = 1});
  rt.start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (count(sql) < 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  rt.stop();
  EXPECT_EQ(server_.executions_total(), 1);
  EXPECT_EQ(transport_->posts().size(), 1u);
  return count(sql) == 1;
}

// A publisher that queues the follow-up with its POST's answer (follow_up_with_post_answer off)
// wakes the handlers' worker for it.
TEST_F(client_publishers, wake_the_handlers_for_the_follow_ups_they_queue) {
  EXPECT_TRUE(one_bill_reaches([](client::endpoint&) {}, {.follow_up_with_post_answer = false},
                               "SELECT count(*) FROM billed"))
      << "the handlers' worker was not woken";
}

// A follow-up run in the publisher's turn (the default) that sends a message: the publisher wakes
// the handlers' worker for it.
TEST_F(client_publishers, wake_the_handlers_for_what_the_follow_ups_they_run_send) {
  conn_.exec("CREATE TABLE receipts (message_id TEXT NOT NULL)");
  const auto adjust = [](client::endpoint& ep) {
    ep.on("billed", [](client::handler_context& ctx) {
      ctx.send("billing", {.id = "receipt-1", .type = "receipt"});
    });
    ep.on("receipt", [](client::handler_context& ctx) {
      ctx.db().prepare("INSERT INTO receipts VALUES (?)").bind(1, ctx.incoming().id).run();
    });
  };
  EXPECT_TRUE(one_bill_reaches(adjust, {}, "SELECT count(*) FROM receipts"))
      << "the handlers' worker was not woken";
}

}  // namespace
}  // namespace exactly::test
