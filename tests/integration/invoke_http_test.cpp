// The client runtime against the real connector: invoke_http from a handler, POST after commit,
// follow-up with the stored response, DELETE; counted on both sides.

#include <echo_server.hpp>
#include <fault_proxy.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include "client/src/attempt_journal.hpp"
#include "client/src/endpoint_core.hpp"
#include "client/src/queue_store.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/http_date.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace exactly::test {
namespace {

class invoke_http : public ::testing::Test {
 protected:
  invoke_http() : db_((dir_.path() / "client.db").string()) {
    cfg_.max_staged_per_principal = 10000;
    db_.exec(
        "CREATE TABLE bills (order_id TEXT PRIMARY KEY);"
        "CREATE TABLE results (order_id TEXT PRIMARY KEY, status INTEGER, body TEXT, n INTEGER)");
  }

  std::shared_ptr<client::http_transport> transport_to(std::uint16_t port) {
    return client::make_beast_transport(
        {.keys = {{"127.0.0.1:" + std::to_string(port), "alice-key"}}});
  }

  client::endpoint make_endpoint(std::uint16_t port,
                                 client::put_wait wait = client::put_wait::before_commit,
                                 std::shared_ptr<client::http_transport> transport = nullptr) {
    client::endpoint ep("billing", db_,
                        {.max_attempts = 3,
                         .retry_base = std::chrono::milliseconds(5),
                         .retry_cap = std::chrono::milliseconds(50),
                         .transport = transport ? std::move(transport) : transport_to(port),
                         .wait_for_put = wait,
                         .max_unanswered_puts = max_unanswered_puts_,
                         .follow_up_with_post_answer = follow_up_with_post_answer_});
    url_ = "http://127.0.0.1:" + std::to_string(port) + "/vectors/echo/{id}";
    ep.on("bill", [this](client::handler_context& ctx) {
      const std::string order = ctx.incoming().body.at("order");
      ctx.db().prepare("INSERT INTO bills VALUES (?)").bind(1, order).run();
      try {
        ctx.invoke_http(url_, ctx.incoming().body.at("payload").dump(), "application/json",
                        {.type = "bill_result", .body = {{"order", order}}});
      } catch (const std::runtime_error& refused) {
        if (!ctx.incoming().body.value("catch_refusal", false))
          throw;
        // The handler's own answer to a refused PUT commits instead of the invocation.
        ctx.db()
            .prepare("INSERT INTO results VALUES (?, 0, ?, 1)")
            .bind_all(order, std::string(refused.what()))
            .run();
      }
      if (ctx.incoming().body.value("fail_after_put", false))
        throw std::runtime_error("boom");
    });
    ep.on("bill_result", [](client::handler_context& ctx) {
      ASSERT_NE(ctx.response(), nullptr);
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

  // Drives the endpoint until nothing is queued or pending, up to 20 s.
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

  // DELETEs, as its owner, the id of the first invocation `select_url` finds, as someone acting
  // behind the runtime's back would.
  void delete_behind_the_runtimes_back(echo_server& server, const char* select_url) {
    auto& s = db_.prepare(select_url);
    ASSERT_TRUE(s.step());
    const std::string url = s.text(0);
    s.reset();
    http_client c(server.port());
    ASSERT_EQ(c.request("DELETE", url.substr(url.find("/vectors")), "", alice).status, 204u);
  }

  // Queues `n` bill messages for orders o-0 .. o-(n-1).
  void queue_bills(int n) {
    client::queue_store queues(db_);
    sqlite::transaction tx(db_);
    for (int i = 0; i < n; ++i) {
      queues.enqueue(
          "billing",
          {.id = std::to_string(i), .type = "bill", .body = {{"order", "o-" + std::to_string(i)}}},
          0);
    }
    tx.commit();
  }

  // A runtime worker's billing endpoint on `transport`, invoking `url` once per bill.
  client::runtime::setup_fn billing_setup(std::shared_ptr<client::http_transport> transport,
                                          std::string url) {
    return [transport, url](sqlite::connection& db) {
      std::vector<std::unique_ptr<client::endpoint>> eps;
      eps.push_back(std::make_unique<client::endpoint>(
          "billing", db,
          client::endpoint_options{.retry_base = std::chrono::milliseconds(5),
                                   .retry_cap = std::chrono::milliseconds(50),
                                   .transport = transport}));
      eps[0]->on("bill", [url](client::handler_context& ctx) {
        const std::string order = ctx.incoming().body.at("order");
        ctx.db().prepare("INSERT INTO bills VALUES (?)").bind(1, order).run();
        ctx.invoke_http(url, R"({"status":200})", "application/json",
                        {.type = "bill_result", .body = {{"order", order}}});
      });
      eps[0]->on("bill_result", [](client::handler_context& ctx) {
        ctx.db()
            .prepare(
                "INSERT INTO results VALUES (?, ?, '', 1)"
                " ON CONFLICT(order_id) DO UPDATE SET n = n + 1")
            .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status)
            .run();
      });
      return eps;
    };
  }

  void through_faults(client::put_wait wait, std::uint64_t seed);
  void expect_each_once_through(int workers, int publishers);

  // Runs `workers` runtime workers until `n` follow-ups committed and nothing is pending.
  void run_until_done(client::runtime::setup_fn setup, int workers, int n, int publishers = 0) {
    client::runtime rt((dir_.path() / "client.db").string(), {}, std::move(setup),
                       {.workers = workers, .publishers = publishers});
    rt.start();
    EXPECT_TRUE(eventually([&] {
      return q("SELECT count(*) FROM results") == n &&
             q("SELECT count(*) FROM exactly_invocations") == 0;
    }));
  }

  // Each of `n` invocations executed once, its follow-up recorded a 200 once, and nothing is
  // left staged or executed on `server`.
  void expect_each_executed_once(echo_server& server, int n) {
    EXPECT_EQ(server.executions_total(), n);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200"), n);
    EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
    EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  }

  bool follow_up_with_post_answer_ = true;  // false: follow-ups queued, with a GET each
  std::size_t max_unanswered_puts_ = client::endpoint_options{}.max_unanswered_puts;
  temp_dir dir_;
  echo_server_config cfg_;
  sqlite::connection db_;
  std::string url_;
};

TEST_F(invoke_http, each_invocation_executes_once_and_each_follow_up_commits_once) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  constexpr int n = 30;
  for (int i = 0; i < n; ++i) {
    const int status = i % 3 == 0 ? 200 : i % 3 == 1 ? 402 : 500;  // business outcomes all
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", status}, {"reply", i}}}}});
  }
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), n);
  EXPECT_EQ(q("SELECT count(*) FROM results"), n);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 402"), n / 3);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE order_id = 'o-4' AND body = '{\"reply\":4}'"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  const auto rows = server.rows();
  EXPECT_EQ(rows.staged, 0);
  EXPECT_EQ(rows.executed, 0);
  EXPECT_EQ(rows.tombstone, n);
}

TEST_F(invoke_http, a_batch_of_invocations_shares_one_commit_per_step) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  constexpr int n = 8;
  for (int i = 0; i < n; ++i) {
    ep.send("billing",
            {.type = "bill",
             .body = {{"order", "o-" + std::to_string(i)}, {"payload", {{"status", 200}}}}});
  }
  int commits = 0;
  sqlite3_commit_hook(
      db_.native(),
      [](void* c) {
        ++*static_cast<int*>(c);
        return 0;
      },
      &commits);
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));  // n handlers, n PUTs
  EXPECT_EQ(commits, 1);
  EXPECT_EQ(ep.publish_due(), static_cast<std::size_t>(n));  // n POSTs, n follow-ups run
  EXPECT_EQ(commits, 2);
  EXPECT_EQ(ep.process_due(), 0u);  // nothing queued: no GET, no commit
  EXPECT_EQ(commits, 2);
  EXPECT_EQ(ep.publish_due(), static_cast<std::size_t>(n));  // n DELETEs
  EXPECT_EQ(commits, 3);
  sqlite3_commit_hook(db_.native(), nullptr, nullptr);
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(q("SELECT count(*) FROM results"), n);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
}

TEST_F(invoke_http, a_failing_handler_in_a_batch_rolls_back_only_itself) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  for (int i = 0; i < 3; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}}},
                                 {"fail_after_put", i == 1}}});
  }
  EXPECT_EQ(ep.process_due(), 2u);  // o-1 failed: retried later
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 2);
  EXPECT_EQ(q("SELECT count(*) FROM bills WHERE order_id = 'o-1'"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 1"), 2);  // POSTs due
  // o-1's PUT, awaited at commit, never went out: nothing to clean up.
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 3"), 0);
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(server.rows().staged, 0);  // the retries, alone in their batch, DELETEd their PUTs
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 1);
}

// Sends through `inner`; start() and send_all() go through send() (the base class defaults), so
// each test transport below changes what it needs by overriding one call.
class forwarding_transport : public client::http_transport {
 public:
  explicit forwarding_transport(std::shared_ptr<client::http_transport> inner)
      : inner_(std::move(inner)) {}
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    return inner_->send(method, url, content_type, body);
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }

 protected:
  std::shared_ptr<client::http_transport> inner_;
};

// Holds the PUTs it is given until `gate` of them are in flight together (or 5 s passed), then
// sends them all; everything else goes straight through.
class gated_transport : public forwarding_transport {
 public:
  gated_transport(std::shared_ptr<client::http_transport> inner, std::size_t gate)
      : forwarding_transport(std::move(inner)),
        gate_(gate),
        releaser_([this] { release_when_full(); }) {}
  ~gated_transport() override { releaser_.join(); }

  std::future<client::http_result> start(const client::http_call& call) override {
    std::lock_guard lock(m_);
    if (call.method != "PUT" || open_)
      return inner_->start(call);
    held_.emplace_back(call, std::promise<client::http_result>());
    full_.notify_one();
    return held_.back().second.get_future();
  }
  bool timed_out() const { return timed_out_; }
  std::size_t most_held() const { return most_held_; }

 private:
  void release_when_full() {
    std::unique_lock lock(m_);
    timed_out_ =
        !full_.wait_for(lock, std::chrono::seconds(5), [&] { return held_.size() >= gate_; });
    most_held_ = held_.size();
    open_ = true;
    for (auto& [call, answer] : held_)
      answer.set_value(inner_->send(call.method, call.url, call.content_type, call.body));
  }

  std::size_t gate_;
  std::mutex m_;
  std::condition_variable full_;
  std::deque<std::pair<client::http_call, std::promise<client::http_result>>> held_;
  bool open_ = false;
  bool timed_out_ = false;
  std::size_t most_held_ = 0;
  std::thread releaser_;
};

TEST_F(invoke_http, a_batch_has_all_its_puts_in_flight_before_it_waits_for_one) {
  echo_server server(cfg_);
  constexpr int n = 8;
  auto gated = std::make_shared<gated_transport>(transport_to(server.port()), n);
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit, gated);
  for (int i = 0; i < n; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}, {"reply", i}}}}});
  }
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));
  // Had a handler waited for its PUT's answer, the gate would have held it until the timeout.
  EXPECT_FALSE(gated->timed_out());
  EXPECT_EQ(gated->most_held(), static_cast<std::size_t>(n));
  EXPECT_EQ(server.rows().staged, n);  // all PUT before the batch committed
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(q("SELECT count(*) FROM results"), n);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  EXPECT_EQ(server.rows().tombstone, n);
}

TEST_F(invoke_http, a_refused_put_in_flight_reruns_the_batch_one_by_one) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  for (int i = 0; i < 3; ++i) {
    // o-1's payload has no status: the route's parse step refuses it with 422 at PUT.
    const nlohmann::json payload =
        i == 1 ? nlohmann::json{{"reply", i}} : nlohmann::json{{"status", 200}, {"reply", i}};
    ep.send("billing",
            {.type = "bill", .body = {{"order", "o-" + std::to_string(i)}, {"payload", payload}}});
  }
  EXPECT_EQ(ep.process_due(), 2u);  // rolled back, then o-0 and o-2 one by one; o-1 fails
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 2);
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 2);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);  // first pass's PUTs DELETEd
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].error.find("422"), std::string::npos) << errors[0].error;
}

// A handler that catches a refused PUT and commits its own answer instead: with the PUTs in
// flight its first run cannot see the refusal, so the batch runs again and it does.
TEST_F(invoke_http, a_caught_put_refusal_commits_the_same_whenever_the_put_is_awaited) {
  for (const auto wait : {client::put_wait::before_commit, client::put_wait::in_handler}) {
    SCOPED_TRACE(wait == client::put_wait::in_handler ? "in_handler" : "before_commit");
    db_.exec("DELETE FROM bills; DELETE FROM results");
    echo_server server(cfg_);
    auto ep = make_endpoint(server.port(), wait);
    for (int i = 0; i < 3; ++i) {
      const nlohmann::json payload =  // o-1 is refused with 422 at PUT
          i == 1 ? nlohmann::json{{"reply", i}} : nlohmann::json{{"status", 200}, {"reply", i}};
      ep.send("billing", {.type = "bill",
                          .body = {{"order", "o-" + std::to_string(i)},
                                   {"payload", payload},
                                   {"catch_refusal", true}}});
    }
    EXPECT_EQ(ep.process_due(), 3u);
    quiesce(ep);
    EXPECT_EQ(server.executions_total(), 2);
    EXPECT_EQ(q("SELECT count(*) FROM bills"), 3);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200"), 2);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE order_id = 'o-1' AND status = 0"
                " AND body LIKE '%422%'"),
              1);
    EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
    EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  }
}

// Sends everything, but loses the answer of each PUT whose body asks for it, as a dropped
// response would: the PUT is staged and the client cannot know.
class losing_transport : public forwarding_transport {
 public:
  using forwarding_transport::forwarding_transport;
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    client::http_result r = inner_->send(method, url, content_type, body);
    if (method == "PUT" && body.find(R"("lose":true)") != std::string_view::npos) {
      ++lost_;
      client::http_result lost;
      lost.transport_failed = true;
      lost.error = "answer lost";
      return lost;
    }
    return r;
  }
  int lost() const { return lost_; }

 private:
  std::atomic<int> lost_{0};
};

// A handler that catches a PUT failure and commits anyway: the id it may have staged is DELETEd.
TEST_F(invoke_http, a_caught_put_failure_still_deletes_what_the_put_may_have_staged) {
  for (const auto wait : {client::put_wait::before_commit, client::put_wait::in_handler}) {
    SCOPED_TRACE(wait == client::put_wait::in_handler ? "in_handler" : "before_commit");
    db_.exec("DELETE FROM bills; DELETE FROM results");
    echo_server server(cfg_);
    auto losing = std::make_shared<losing_transport>(transport_to(server.port()));
    auto ep = make_endpoint(server.port(), wait, losing);
    for (int i = 0; i < 3; ++i) {
      const nlohmann::json payload = {{"status", 200}, {"reply", i}, {"lose", i == 1}};
      ep.send("billing", {.type = "bill",
                          .body = {{"order", "o-" + std::to_string(i)},
                                   {"payload", payload},
                                   {"catch_refusal", true}}});
    }
    quiesce(ep);
    EXPECT_GE(losing->lost(), 3);  // o-1's PUT and both of its retries
    EXPECT_EQ(server.executions_total(), 2);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE order_id = 'o-1' AND status = 0"), 1);
    EXPECT_EQ(server.rows().staged, 0);  // o-1's staged id was DELETEd
    EXPECT_EQ(server.rows().executed, 0);
  }
}

TEST_F(invoke_http, a_url_the_transport_cannot_use_fails_the_handler_and_blocks_nothing) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.on("bad_url", [](client::handler_context& ctx) {
    ctx.invoke_http("ftp://127.0.0.1:1/x/{id}", "{}", "application/json", {.type = "never"});
  });
  ep.send("billing", {.type = "bad_url"});
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  quiesce(ep);  // publishing goes on: no DELETE of an unusable URL is ever queued
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 1);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].error.find("unsupported scheme 'ftp' (only http and https)"),
            std::string::npos)
      << errors[0].error;
  client::attempt_journal journal(client::attempt_journal_path(db_.path()));
  EXPECT_TRUE(journal.older_than("billing", system_now_ms(), 10).empty());
}

// 40 invocations through a proxy that drops, resets and duplicates: each executes once.
void invoke_http::through_faults(client::put_wait wait, std::uint64_t seed) {
  echo_server server(cfg_);
  tools::fault_proxy proxy({.upstream_port = server.port(),
                            .drop_request = 0.1,
                            .drop_response = 0.15,
                            .reset = 0.05,
                            .duplicate = 0.15,
                            .seed = seed});
  auto ep = make_endpoint(proxy.start(), wait);
  constexpr int n = 40;
  for (int i = 0; i < n; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}, {"reply", i}}}}});
  }
  quiesce(ep);
  const auto f = proxy.counts();
  EXPECT_GT(f.dropped_responses + f.dropped_requests + f.resets, 0u);
  EXPECT_EQ(q("SELECT count(*) FROM results"), n);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  // Every committed invoke executed once; a PUT whose handler attempt failed never executes.
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(server.rows().executed, 0);
  EXPECT_EQ(server.rows().staged, 0);  // failed attempts' DELETEs are retried until they land
}

TEST_F(invoke_http, lost_and_duplicated_traffic_still_executes_once) {
  through_faults(client::put_wait::before_commit, 7);
}

TEST_F(invoke_http, puts_awaited_in_handlers_under_lost_and_duplicated_traffic_execute_once) {
  through_faults(client::put_wait::in_handler, 9);
}

TEST_F(invoke_http, puts_never_awaited_under_lost_and_duplicated_traffic_execute_once) {
  through_faults(client::put_wait::never, 13);
}

// Holds back the first PUT of each URL, as a network that delays it would, and answers it with
// no answer; sends it when released. Everything else (the re-PUTs) goes straight through.
class delaying_transport : public forwarding_transport {
 public:
  using forwarding_transport::forwarding_transport;
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    {
      std::lock_guard lock(m_);
      if (method == "PUT" && seen_.insert(std::string(url)).second) {
        held_.push_back({"PUT", std::string(url), std::string(content_type), std::string(body)});
        client::http_result delayed;
        delayed.transport_failed = true;
        delayed.error = "delayed";
        return delayed;
      }
    }
    return inner_->send(method, url, content_type, body);
  }
  // Sends the PUTs held back; their statuses.
  std::vector<unsigned> release() {
    std::vector<unsigned> statuses;
    for (const client::http_call& c : held_)
      statuses.push_back(inner_->send(c.method, c.url, c.content_type, c.body).status);
    return statuses;
  }

 private:
  std::mutex m_;
  std::set<std::string> seen_;
  std::vector<client::http_call> held_;
};

// put_wait::never: the batch commits and its POSTs go out before any PUT arrived. Each POST meets
// 404 and stages its request again; each invocation executes once, and the first PUTs, arriving
// after all that, stage nothing.
TEST_F(invoke_http, posts_that_overtake_their_puts_stage_them_again_and_execute_once) {
  echo_server server(cfg_);
  auto delaying = std::make_shared<delaying_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::never, delaying);
  constexpr int n = 3;
  for (int i = 0; i < n; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}, {"reply", i}}}}});
  }
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));  // committed, no PUT arrived
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), n);
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), n);
  for (const unsigned status : delaying->release())
    EXPECT_EQ(status, 410u);  // the id is a tombstone now
  expect_each_executed_once(server, n);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
}

// Holds the PUTs started through it until release(), then sends them; the rest goes through,
// and the PUTs sent (not started) are counted.
class holding_transport : public forwarding_transport {
 public:
  using forwarding_transport::forwarding_transport;
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    sent_puts_ += method == "PUT" ? 1 : 0;
    return inner_->send(method, url, content_type, body);
  }
  int sent_puts() const { return sent_puts_; }
  std::future<client::http_result> start(const client::http_call& call) override {
    if (call.method != "PUT")
      return forwarding_transport::start(call);
    std::lock_guard lock(m_);
    held_.emplace_back(call, std::promise<client::http_result>());
    return held_.back().second.get_future();
  }
  std::size_t held() {
    std::lock_guard lock(m_);
    return held_.size();
  }
  // Sends the `n` oldest held PUTs (all by default) and answers them.
  void release(std::size_t n = SIZE_MAX) {
    std::lock_guard lock(m_);
    for (; n > 0 && !held_.empty(); --n) {
      auto& [call, answer] = held_.front();
      answer.set_value(inner_->send(call.method, call.url, call.content_type, call.body));
      held_.pop_front();
    }
  }

 private:
  std::mutex m_;
  std::deque<std::pair<client::http_call, std::promise<client::http_result>>> held_;
  std::atomic<int> sent_puts_{0};
};

// put_wait::never: the batch commits, and process_due() returns, while its PUTs are unanswered;
// they are answered later, and each invocation executes once with no PUT sent again.
TEST_F(invoke_http, a_batch_commits_while_its_never_awaited_puts_are_unanswered) {
  echo_server server(cfg_);
  auto holding = std::make_shared<holding_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::never, holding);
  constexpr int n = 4;
  for (int i = 0; i < n; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}, {"reply", i}}}}});
  }
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));
  EXPECT_EQ(holding->held(), static_cast<std::size_t>(n));  // sent, none answered
  EXPECT_EQ(q("SELECT count(*) FROM bills"), n);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 1"), n);  // POSTs due
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(client::core_of(ep).unawaited_puts.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(ep.process_due(), 0u);  // not answered yet: kept
  EXPECT_EQ(client::core_of(ep).unawaited_puts.size(), static_cast<std::size_t>(n));
  holding->release();
  EXPECT_EQ(server.rows().staged, n);
  EXPECT_EQ(ep.process_due(), 0u);  // the next turn takes the answers
  EXPECT_TRUE(client::core_of(ep).unawaited_puts.empty());
  quiesce(ep);
  EXPECT_EQ(holding->sent_puts(), 0);  // staged already: no re-PUT
  expect_each_executed_once(server, n);
}

// put_wait::never: beyond endpoint_options::max_unanswered_puts, a turn of process_due() waits
// for the oldest PUTs' answers, and keeps the newer ones; each invocation still executes once.
TEST_F(invoke_http, a_turn_waits_for_the_oldest_puts_beyond_the_unanswered_limit) {
  echo_server server(cfg_);
  auto holding = std::make_shared<holding_transport>(transport_to(server.port()));
  max_unanswered_puts_ = 2;
  auto ep = make_endpoint(server.port(), client::put_wait::never, holding);
  constexpr int n = 5;
  for (int i = 0; i < n; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}, {"reply", i}}}}});
  }
  EXPECT_EQ(ep.process_due(), static_cast<std::size_t>(n));  // one batch: nothing to take before
  ASSERT_EQ(holding->held(), static_cast<std::size_t>(n));
  std::atomic<bool> entered{false}, released{false}, returned{false};
  std::jthread answering([&] {
    while (!entered)
      std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    released = true;
    holding->release(n - 2);  // the three oldest
    // A turn that waited for more would hang: let it end, and fail below.
    for (int i = 0; i < 1000 && !returned; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    holding->release();
  });
  entered = true;
  EXPECT_EQ(ep.process_due(), 0u);
  EXPECT_TRUE(released) << "the turn did not wait for the PUTs beyond the limit";
  EXPECT_EQ(client::core_of(ep).unawaited_puts.size(), 2u);  // the newest, still held
  EXPECT_EQ(holding->held(), 2u);
  returned = true;  // the thread releases them now
  answering.join();
  quiesce(ep);
  EXPECT_TRUE(client::core_of(ep).unawaited_puts.empty());
  EXPECT_EQ(holding->sent_puts(), 0);  // staged already: no re-PUT
  expect_each_executed_once(server, n);
}

// endpoint_options::max_unanswered_puts of 0 is refused by the endpoint's constructor.
TEST_F(invoke_http, an_unanswered_puts_limit_of_zero_is_refused) {
  max_unanswered_puts_ = 0;
  EXPECT_THROW(make_endpoint(1, client::put_wait::never), std::invalid_argument);
}

// put_wait::never: a PUT the server refuses does not fail the handler's attempt, which commits.
// Its POSTs meet 404 and its re-PUTs the same refusal, until the id is too old: then the message
// goes to the error queue (proto-spec §9 rules 6, 7 and 9), and nothing executed it.
TEST_F(invoke_http, with_put_wait_never_a_refused_put_is_put_again_until_the_id_is_too_old) {
  echo_server server(cfg_);
  // Its start() sends at once: the PUTs are answered before the batch commits, so only o-1's
  // POST meets 404 (with the Beast transport's the POSTs may overtake them all).
  auto ep = make_endpoint(server.port(), client::put_wait::never,
                          std::make_shared<forwarding_transport>(transport_to(server.port())));
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json payload =  // o-1 is refused with 422 at PUT
        i == 1 ? nlohmann::json{{"reply", i}} : nlohmann::json{{"status", 200}, {"reply", i}};
    ep.send("billing",
            {.type = "bill", .body = {{"order", "o-" + std::to_string(i)}, {"payload", payload}}});
  }
  EXPECT_EQ(ep.process_due(), 3u);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 3);  // o-1's handler committed too
  ep.publish_due();  // o-0 and o-2 execute; o-1's POST meets 404: its re-PUT is due later
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 4"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past retry_cap
  ep.publish_due();  // the re-PUT meets 422, which stays as the row's last error: POST again
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 1"
              " AND last_error LIKE 'PUT answered 422%'"),
            1);
  for (int i = 0; i < 20; ++i) {
    ep.run_until_idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(ep.pending_invocations(), 1);  // o-1: POST, 404, re-PUT, 422, POST again, ...
  EXPECT_TRUE(ep.errors().empty());
  server.advance_seconds(2 * 3600);  // o-1's id leaves the acceptance window
  quiesce(ep);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].error.find("request-too-old"), std::string::npos) << errors[0].error;
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200"), 2);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
}

// PUTs awaited in the handler: each failed attempt's PUT went out and needs its DELETE.
TEST_F(invoke_http, failed_attempts_are_deleted_even_when_deletes_are_lost) {
  echo_server server(cfg_);
  tools::fault_proxy proxy({.upstream_port = server.port(), .drop_request = 0.4, .seed = 11});
  auto ep = make_endpoint(proxy.start(), client::put_wait::in_handler);
  for (int i = 0; i < 5; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}}},
                                 {"fail_after_put", true}}});
  }
  quiesce(ep);
  EXPECT_GT(proxy.counts().dropped_requests, 0u);
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 5);
}

TEST_F(invoke_http, a_put_whose_process_died_before_commit_is_deleted_from_the_journal) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  // What a process killed between its PUT and its commit leaves: a staged id, journaled.
  const std::string orphan = request_id::mint().to_string();
  http_client c(server.port());
  ASSERT_EQ(c.request("PUT", path_of(orphan), R"({"status":200})", alice).status, 201u);
  client::attempt_journal journal(client::attempt_journal_path(db_.path()));
  journal.record("billing",
                 {{orphan, "http://127.0.0.1:" + std::to_string(server.port()) + path_of(orphan)}},
                 system_now_ms() - 60'000);
  // A committed invoke whose journal entry was never dropped (killed right after its commit).
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);
  auto& s = db_.prepare("SELECT request_id, url FROM exactly_invocations");
  ASSERT_TRUE(s.step());
  const client::journal_entry committed{s.text(0), s.text(1)};
  s.reset();
  journal.record("billing", {committed}, system_now_ms() - 60'000);

  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 1);  // the committed invoke ran, the orphan never did
  EXPECT_EQ(q("SELECT count(*) FROM results"), 1);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 2);
  EXPECT_TRUE(journal.older_than("billing", system_now_ms(), 10).empty());
}

// The publisher reads the journal for orphans at most every quarter of orphan_grace: an entry
// that comes of age just after a read waits for the next one, and no longer; a full page of
// orphans is followed by another read at once.
TEST_F(invoke_http,
       the_journal_is_read_for_orphans_every_quarter_of_the_grace_and_after_a_full_page) {
  echo_server server(cfg_);
  std::int64_t now = system_now_ms();
  const std::int64_t start = now;
  client::endpoint ep("billing", db_,
                      {.clock = [&now] { return now; },
                       .transport = transport_to(server.port()),
                       .orphan_grace = std::chrono::milliseconds(4000)});
  client::attempt_journal journal(client::attempt_journal_path(db_.path()));
  const auto orphans = [&](int n) {
    std::vector<client::journal_entry> entries;
    for (int i = 0; i < n; ++i) {
      const std::string id = request_id::mint().to_string();
      entries.push_back({id, "http://127.0.0.1:" + std::to_string(server.port()) + path_of(id)});
    }
    journal.record("billing", entries, start);
    return entries;
  };
  const auto journaled = [&] { return journal.older_than("billing", now + 1, 1000).size(); };

  orphans(1);
  now = start + 3999;  // read: the entry is not of age yet
  ep.publish_due();
  now = start + 4000;  // of age, but the last read was 1 ms ago
  ep.publish_due();
  now = start + 4998;
  ep.publish_due();
  EXPECT_EQ(journaled(), 1u);
  now = start + 4999;  // a quarter of the grace after the last read
  ep.publish_due();
  EXPECT_EQ(journaled(), 0u);

  orphans(65);  // of age at once; the next read is due a quarter of the grace later
  now = start + 5998;
  ep.publish_due();
  EXPECT_EQ(journaled(), 65u);
  now = start + 5999;
  ep.publish_due();  // a full page of 64
  EXPECT_EQ(journaled(), 1u);
  ep.publish_due();  // at the same instant: the last one
  EXPECT_EQ(journaled(), 0u);
  ep.run_until_idle();
  EXPECT_EQ(ep.pending_invocations(), 0);  // each orphan's DELETE was sent
  EXPECT_EQ(server.executions_total(), 0);
}

TEST_F(invoke_http, a_failed_attempt_deletes_its_put_and_never_executes) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.send("billing",
          {.type = "bill",
           .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}, {"fail_after_put", true}}});
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(server.rows().staged, 0);     // each attempt's PUT was DELETEd
  EXPECT_EQ(server.rows().tombstone, 3);  // three attempts, three ids
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 1);
}

TEST_F(invoke_http, a_consumed_id_on_post_goes_to_the_error_queue_not_reinvoked) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);  // handler committed; POST not yet published
  // Someone deletes the staged request behind the runtime's back.
  delete_behind_the_runtimes_back(server, "SELECT url FROM exactly_invocations");
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 0);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("request-consumed"), std::string::npos) << errors[0].error;
}

// A follow-up whose statement the database refuses (run with its POST's answer, in the
// publisher's transaction) fails that attempt only, as a handler that throws would: the POST's
// answer commits, the follow-up is tried again with that response and error-queued, the id is
// DELETEd; the publisher does not roll its turn back and send the POST again for ever.
TEST_F(invoke_http, a_follow_up_statement_the_database_refuses_fails_that_attempt_only) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  int runs = 0;
  ep.on("bill_result", [&runs](client::handler_context& ctx) {
    ++runs;  // the order is in bills already, from the "bill" handler
    ctx.db()
        .prepare("INSERT INTO bills VALUES (?)")
        .bind(1, ctx.incoming().body.at("order").get<std::string>())
        .run();
  });
  ep.send("billing", {.type = "bill",
                      .body = {{"order", "o-1"}, {"payload", {{"status", 200}, {"reply", 1}}}}});
  quiesce(ep);
  EXPECT_EQ(runs, 3);  // max_attempts
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("UNIQUE"), std::string::npos) << errors[0].error;
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(server.rows().tombstone, 1);
}

// A follow-up handler that fails until its attempts are exhausted: the follow-up goes to the
// error queue keeping the stored response it was given, and its id is DELETEd all the same.
// Requeued with the handler fixed, it runs once with that response (the id is gone: no GET).
TEST_F(invoke_http,
       an_error_queued_follow_up_still_deletes_its_id_and_runs_requeued_with_its_response) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  int failures = 0;
  ep.on("bill_result", [&failures](client::handler_context&) {
    ++failures;
    throw std::runtime_error("follow-up handler broken");
  });
  ep.send("billing", {.type = "bill",
                      .body = {{"order", "o-1"}, {"payload", {{"status", 402}, {"reply", 1}}}}});
  quiesce(ep);
  EXPECT_EQ(failures, 3);  // max_attempts
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_EQ(errors[0].error, "follow-up handler broken");
  // Counted on both sides: the client holds nothing, the server only the id's tombstone.
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().executed, 0);
  EXPECT_EQ(server.rows().tombstone, 1);

  // Fixed, and returned to the queue by an operator.
  int runs = 0;
  client::http_result seen;
  ep.on("bill_result", [&](client::handler_context& ctx) {
    ++runs;
    ASSERT_NE(ctx.response(), nullptr);
    seen = *ctx.response();
    ctx.db()
        .prepare("INSERT INTO results VALUES (?, ?, ?, 1)")
        .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status,
                  ctx.response()->body)
        .run();
  });
  EXPECT_TRUE(ep.requeue_error(errors[0].seq));
  quiesce(ep);
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(ep.errors().empty());
  EXPECT_EQ(seen.status, 402u);
  EXPECT_EQ(seen.body, R"({"reply":1})");
  EXPECT_EQ(seen.outcome, "executed");  // as the POST's answer had brought it
  EXPECT_NE(seen.content_type.find("application/json"), std::string::npos) << seen.content_type;
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE order_id = 'o-1' AND status = 402 AND n = 1"), 1);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(server.rows().tombstone, 1);
}

// Counts the requests it carries, by method.
class counting_transport : public forwarding_transport {
 public:
  using forwarding_transport::forwarding_transport;
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    {
      std::lock_guard lock(m_);
      ++sent_[std::string(method)];
    }
    return inner_->send(method, url, content_type, body);
  }
  int sent(const std::string& method) {
    std::lock_guard lock(m_);
    return sent_[method];
  }

 private:
  std::mutex m_;
  std::map<std::string, int> sent_;
};

// PUTs awaited at commit go out once the batch's handlers have run: a failed handler's never do,
// and the others' are journaled together.
TEST_F(invoke_http, a_failed_handler_sends_no_put_when_puts_are_awaited_at_commit) {
  echo_server server(cfg_);
  auto transport = std::make_shared<counting_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit, transport);
  for (int i = 0; i < 3; ++i) {
    ep.send("billing", {.type = "bill",
                        .body = {{"order", "o-" + std::to_string(i)},
                                 {"payload", {{"status", 200}}},
                                 {"fail_after_put", i == 1}}});
  }
  EXPECT_EQ(ep.process_due(), 2u);
  EXPECT_EQ(transport->sent("PUT"), 2);
  EXPECT_EQ(server.rows().staged + server.executions_total(), 2);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 2);  // no cleanup row for o-1
  sqlite::connection journal(client::attempt_journal_path(db_.path()));
  EXPECT_EQ(journal.query_int64("SELECT count(*) FROM exactly_attempts"), 0);  // all forgotten
}

// A handler that rolls back a savepoint of its own around invoke_http, then commits, leaves an id
// with no invocation row: awaited at commit its PUT never goes out; sent in the handler it is
// DELETEd. Nothing stays staged, nothing runs, nothing is left pending.
TEST_F(invoke_http, an_invoke_rolled_back_inside_a_committed_handler_leaves_nothing_staged) {
  for (const client::put_wait wait :
       {client::put_wait::before_commit, client::put_wait::in_handler}) {
    SCOPED_TRACE(wait == client::put_wait::before_commit ? "before_commit" : "in_handler");
    echo_server server(cfg_);
    auto transport = std::make_shared<counting_transport>(transport_to(server.port()));
    auto ep = make_endpoint(server.port(), wait, transport);
    ep.on("undone", [this](client::handler_context& ctx) {
      sqlite::transaction undone(ctx.db());  // rolled back at the end of the scope
      ctx.invoke_http(url_, R"({"status":200})", "application/json", {.type = "bill_result"});
    });
    for (int i = 0; i < 2; ++i)  // one batch of two: PUTs awaited at commit with before_commit
      ep.send("billing", {.type = "undone", .body = {{"n", i}}});
    EXPECT_EQ(ep.process_due(), 2u);
    quiesce(ep);
    const bool sent = wait == client::put_wait::in_handler;
    EXPECT_EQ(transport->sent("PUT"), sent ? 2 : 0);
    EXPECT_EQ(transport->sent("DELETE"), sent ? 2 : 0);
    EXPECT_EQ(server.rows().staged, 0);
    EXPECT_EQ(server.rows().tombstone, sent ? 2 : 0);
    EXPECT_EQ(server.executions_total(), 0);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  }
}

// A follow-up (run by the publisher, waiting for its PUTs in the handler) that rolls back a
// savepoint of its own around invoke_http, then commits: the id it PUT is DELETEd.
TEST_F(invoke_http, an_invoke_rolled_back_inside_a_follow_up_is_deleted) {
  echo_server server(cfg_);
  auto transport = std::make_shared<counting_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit, transport);
  ep.on("first", [this](client::handler_context& ctx) {
    ctx.invoke_http(url_, R"({"status":200})", "application/json", {.type = "second"});
  });
  ep.on("second", [this](client::handler_context& ctx) {
    sqlite::transaction undone(ctx.db());  // rolled back at the end of the scope
    ctx.invoke_http(url_, R"({"status":200})", "application/json", {.type = "never"});
  });
  ep.send("billing", {.type = "first", .body = {}});
  quiesce(ep);
  EXPECT_EQ(transport->sent("PUT"), 2);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 2);  // the first id after its follow-up, the second's cleanup
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
}

// The journal refuses to record a batch's PUTs: none is sent and nothing of the batch commits.
// Each message then runs alone, its handler waiting for its PUT, where the refusal fails the
// attempt: no PUT either, one attempt counted, its id given a DELETE. The messages run once each
// when the journal works again.
TEST_F(invoke_http, a_journal_that_fails_sends_no_put_and_commits_nothing) {
  echo_server server(cfg_);
  auto transport = std::make_shared<counting_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit, transport);
  sqlite::connection journal(client::attempt_journal_path(db_.path()));
  journal.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON exactly_attempts"
      " BEGIN SELECT RAISE(ABORT, 'the journal refuses'); END");
  for (int i = 0; i < 3; ++i) {
    ep.send("billing",
            {.type = "bill",
             .body = {{"order", "o-" + std::to_string(i)}, {"payload", {{"status", 200}}}}});
  }
  EXPECT_EQ(ep.process_due(), 0u);
  EXPECT_EQ(transport->sent("PUT"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state <> 3"), 0);  // delete_pending
  EXPECT_EQ(ep.queued(), 3);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue WHERE attempts = 1"), 3);
  journal.exec("DROP TRIGGER refuse");
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 3);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 3);
  EXPECT_EQ(server.rows().staged, 0);
}

// A follow-up runs in the transaction that records its POST's answer, with that answer: no GET.
// When its handler fails there, it is queued with the answer kept and one attempt counted, and
// runs again from the queue, still without a GET.
TEST_F(invoke_http, a_follow_up_failing_with_the_post_answer_is_queued_with_it_and_never_gets) {
  echo_server server(cfg_);
  auto transport = std::make_shared<counting_transport>(transport_to(server.port()));
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit, transport);
  int runs = 0;
  ep.on("bill_result", [&](client::handler_context& ctx) {
    if (++runs == 1)
      throw std::runtime_error("first run fails");
    ctx.db()
        .prepare("INSERT INTO results VALUES (?, ?, ?, 1)")
        .bind_all(ctx.incoming().body.at("order").get<std::string>(), ctx.response()->status,
                  ctx.response()->body)
        .run();
  });
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);
  ASSERT_EQ(ep.publish_due(), 1u);  // POSTed; its follow-up failed and was queued
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE type = 'bill_result'"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue WHERE last_error = 'first run fails'"), 1);
  quiesce(ep);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(transport->sent("GET"), 0);
  EXPECT_EQ(transport->sent("POST"), 1);
  EXPECT_EQ(transport->sent("DELETE"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 1);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_TRUE(ep.errors().empty());
  EXPECT_EQ(server.rows().tombstone, 1);
}

// A GET that finds no stored response (here: the id was DELETEd behind the runtime's back) puts
// the follow-up in the error queue with the problem, and the id still gets its DELETE. Requeued,
// it has no response to run with: it GETs again and goes back to the error queue.
TEST_F(invoke_http, a_follow_up_whose_get_finds_the_id_consumed_is_error_queued_and_deleted) {
  follow_up_with_post_answer_ = false;
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);  // handler committed
  ASSERT_EQ(ep.publish_due(), 1u);  // POST executed, follow-up queued
  delete_behind_the_runtimes_back(server, "SELECT url FROM exactly_invocations WHERE state = 2");
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("request-consumed"), std::string::npos) << errors[0].error;

  EXPECT_TRUE(ep.requeue_error(errors[0].seq));
  quiesce(ep);
  errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].error.find("request-consumed"), std::string::npos) << errors[0].error;
  EXPECT_EQ(q("SELECT count(*) FROM results"), 0);
}

// A transport whose first batches throw, as a bug or an exhausted resource would.
class throwing_transport : public forwarding_transport {
 public:
  using forwarding_transport::forwarding_transport;
  std::vector<client::http_result> send_all(const std::vector<client::http_call>& calls) override {
    if (throws_left_.fetch_sub(1) > 0)
      throw std::runtime_error("transport bug");
    return inner_->send_all(calls);
  }
  int thrown() const { return 3 - std::max(0, throws_left_.load()); }

 private:
  std::atomic<int> throws_left_{3};
};

TEST_F(invoke_http, a_runtime_worker_survives_an_exception_outside_handlers) {
  echo_server server(cfg_);
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  auto transport = std::make_shared<throwing_transport>(
      client::make_beast_transport({.keys = {{host, "alice-key"}}}));
  constexpr int n = 10;
  queue_bills(n);
  run_until_done(billing_setup(transport, "http://" + host + "/vectors/echo/{id}"), 1, n);
  EXPECT_EQ(transport->thrown(), 3);
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
}

// `n` bills through a runtime of `workers` handler workers and `publishers` publisher threads
// (0: the workers publish too): each executed once, each follow-up once, nothing left over.
void invoke_http::expect_each_once_through(int workers, int publishers) {
  echo_server server(cfg_);
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  constexpr int n = 100;
  queue_bills(n);
  run_until_done(billing_setup(client::make_beast_transport({.keys = {{host, "alice-key"}}}),
                               "http://" + host + "/vectors/echo/{id}"),
                 workers, n, publishers);
  EXPECT_EQ(server.executions_total(), n);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), n);
  EXPECT_EQ(q("SELECT count(*) FROM results"), n);
  EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(server.rows().executed, 0);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, n);
}

TEST_F(invoke_http, concurrent_workers_still_execute_once_and_follow_up_once) {
  expect_each_once_through(4, 0);
}

// Handler workers and publisher threads apart: each step still done once by one of them.
TEST_F(invoke_http, workers_and_publishers_apart_still_execute_once_and_follow_up_once) {
  expect_each_once_through(2, 2);
}

// The server clock's span around something the server did: what it stamped lies within.
struct clock_span {
  std::int64_t before_ms = 0, after_ms = 0;
  // Whether `until_ms` is `plus_ms` after a moment of the span, rounded down to the second.
  bool holds(std::int64_t until_ms, std::int64_t plus_ms) const {
    return until_ms % 1000 == 0 && until_ms >= (before_ms + plus_ms) / 1000 * 1000 &&
           until_ms <= (after_ms + plus_ms) / 1000 * 1000;
  }
};

constexpr std::int64_t staged_ttl_ms = 24LL * 3600 * 1000;
constexpr std::int64_t retention_ms = 7LL * 24 * 3600 * 1000;

// The invocation records until when the server keeps its staged request (the PUT answer's
// Exactly-Once-Retention) and then its stored response (the POST answer's), and the follow-up
// sees the response's. `bills` bills are handled in one batch.
void expect_retention_recorded(echo_server& server, client::endpoint& ep, sqlite::connection& db,
                               int bills) {
  for (int i = 0; i < bills; ++i) {
    ep.send("billing",
            {.type = "bill",
             .body = {{"order", "o-" + std::to_string(i)}, {"payload", {{"status", 200}}}}});
  }
  const clock_span put{server.now_ms(), 0};
  ASSERT_EQ(ep.process_due(), static_cast<std::size_t>(bills));
  const clock_span put_done{put.before_ms, server.now_ms()};
  std::vector<std::string> ids;
  {
    auto& s = db.prepare("SELECT request_id FROM exactly_invocations ORDER BY request_id");
    while (s.step())
      ids.push_back(s.text(0));
    s.reset();
  }
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(bills));
  for (const std::string& id : ids) {
    const auto info = ep.invocation(id);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->state, "post_pending");
    ASSERT_TRUE(info->staged_until_ms.has_value()) << id;
    EXPECT_TRUE(put_done.holds(*info->staged_until_ms, staged_ttl_ms))
        << format_http_date(*info->staged_until_ms);
    EXPECT_FALSE(info->response_until_ms.has_value());
  }
  std::vector<std::string> seen;
  ep.on("bill_result", [&seen](client::handler_context& ctx) {
    ASSERT_NE(ctx.response(), nullptr);
    seen.push_back(ctx.response()->retention);
  });
  server.advance_seconds(3600);  // the response's time is its execution's, not the PUT's
  const clock_span post{server.now_ms(), 0};
  ASSERT_EQ(ep.publish_due(), static_cast<std::size_t>(bills));  // POSTs, follow-ups run
  const clock_span post_done{post.before_ms, server.now_ms()};
  for (const std::string& id : ids) {
    const auto info = ep.invocation(id);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->state, "delete_pending");
    ASSERT_TRUE(info->response_until_ms.has_value()) << id;
    EXPECT_TRUE(post_done.holds(*info->response_until_ms, retention_ms))
        << format_http_date(*info->response_until_ms);
  }
  ep.run_until_idle();
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(bills));
  for (const std::string& r : seen) {
    const auto at = parse_http_date(r);
    ASSERT_TRUE(at.has_value()) << r;
    EXPECT_TRUE(post_done.holds(*at, retention_ms)) << r;
  }
  for (const std::string& id : ids)
    EXPECT_FALSE(ep.invocation(id).has_value());  // finished: DELETEd and forgotten
}

TEST_F(invoke_http, an_invocation_records_until_when_the_server_keeps_it_put_awaited_in_handler) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port(), client::put_wait::in_handler);
  expect_retention_recorded(server, ep, db_, 1);
}

TEST_F(invoke_http, an_invocation_records_until_when_the_server_keeps_it_puts_awaited_at_commit) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port(), client::put_wait::before_commit);
  expect_retention_recorded(server, ep, db_, 3);  // a batch: its PUTs awaited before the commit
}

// An id whose tombstone the server purged is gone, not unknown: the POST answers 410
// request-too-old, and the follow-up goes to the error queue naming it.
TEST_F(invoke_http, a_purged_id_on_post_goes_to_the_error_queue_as_too_old) {
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);  // handler committed; POST not yet published
  delete_behind_the_runtimes_back(server, "SELECT url FROM exactly_invocations");
  server.advance_seconds(2 * 3600);
  ASSERT_EQ(server.sweep().purged_tombstones, 1);
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 0);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("POST answered 410 request-too-old"), std::string::npos)
      << errors[0].error;
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.rows().tombstone, 0);  // the DELETE of an old unknown id writes nothing
}

// The same on the follow-up's GET.
TEST_F(invoke_http, a_purged_id_on_get_goes_to_the_error_queue_as_too_old) {
  follow_up_with_post_answer_ = false;
  echo_server server(cfg_);
  auto ep = make_endpoint(server.port());
  ep.send("billing", {.type = "bill", .body = {{"order", "o-1"}, {"payload", {{"status", 200}}}}});
  ASSERT_EQ(ep.process_due(), 1u);  // handler committed
  ASSERT_EQ(ep.publish_due(), 1u);  // POST executed, follow-up queued
  delete_behind_the_runtimes_back(server, "SELECT url FROM exactly_invocations WHERE state = 2");
  server.advance_seconds(2 * 3600);
  ASSERT_EQ(server.sweep().purged_tombstones, 1);
  quiesce(ep);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results"), 0);
  const auto errors = ep.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].msg.type, "bill_result");
  EXPECT_NE(errors[0].error.find("GET answered 410 request-too-old"), std::string::npos)
      << errors[0].error;
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
}

}  // namespace
}  // namespace exactly::test
