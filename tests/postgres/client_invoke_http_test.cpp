// invoke_http with the client on PostgreSQL against a real connector (the echo server, on
// SQLite): one execution and one follow-up per invocation, by one endpoint and by runtime
// workers; the journal outside the handler's transaction; orphans and running attempts.
#include "client_test_db.hpp"

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include "client/src/attempt_journal.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>
#include <exactly/common/storage_error.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

namespace exactly::test {
namespace {

class postgres_invoke_http : public ::testing::Test {
 protected:
  postgres_invoke_http() {
    cfg_.max_staged_per_principal = 10000;
    exec_sql(db(),
             "CREATE TABLE bills (order_id TEXT PRIMARY KEY);"
             "CREATE TABLE results (order_id TEXT PRIMARY KEY, status BIGINT, n BIGINT)");
  }
  database db() { return tdb_->db(); }
  std::int64_t q(const char* sql) { return query_int(db(), sql); }

  std::shared_ptr<client::http_transport> transport_to(std::uint16_t port) {
    return client::make_beast_transport(
        {.keys = {{"127.0.0.1:" + std::to_string(port), "alice-key"}}});
  }
  std::string url_of(std::uint16_t port) {
    return "http://127.0.0.1:" + std::to_string(port) + "/vectors/echo/{id}";
  }

  // A billing endpoint on `on`: "bill" inserts a bill and invokes the echo route, "bill_result"
  // records the stored response's status (n counts follow-up commits per order); through
  // `transport` when given.
  std::unique_ptr<client::endpoint> billing(
      database on, std::uint16_t port, client::endpoint_options o = {},
      std::shared_ptr<client::http_transport> transport = nullptr) {
    o.retry_base = std::chrono::milliseconds(5);
    o.retry_cap = std::chrono::milliseconds(50);
    o.transport = transport ? std::move(transport) : transport_to(port);
    auto ep = std::make_unique<client::endpoint>("billing", on, o);
    ep->on("bill", [url = url_of(port)](client::handler_context& ctx) {
      const std::string order = ctx.incoming().body.at("order");
      ctx.pg().query("INSERT INTO bills VALUES ($1)", order);
      ctx.invoke_http(url, R"({"status":200})", "application/json",
                      {.type = "bill_result", .body = {{"order", order}}});
    });
    ep->on("bill_result", [](client::handler_context& ctx) {
      ctx.pg().query(
          "INSERT INTO results VALUES ($1, $2, 1)"
          " ON CONFLICT(order_id) DO UPDATE SET n = results.n + 1",
          ctx.incoming().body.at("order").get<std::string>(),
          static_cast<int>(ctx.response()->status));
    });
    return ep;
  }

  void queue_bills(int n) {
    client::endpoint seeder("billing", db(), {});
    database_transaction tx(db());
    for (int i = 0; i < n; ++i) {
      client::send_in_transaction(
          db(), "billing",
          {.id = std::to_string(i), .type = "bill", .body = {{"order", "o-" + std::to_string(i)}}});
    }
    tx.commit();
  }

  // Drives `ep` until nothing is queued or pending, up to 20 s.
  void quiesce(client::endpoint& ep) {
    for (int i = 0; i < 2000; ++i) {
      ep.run_until_idle();
      if (ep.queued() == 0 && ep.pending_invocations() == 0)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "did not quiesce";
  }

  // A trigger `name`, BEFORE `event` (such as "UPDATE ON exactly_queue"), that raises `message`
  // for each row where `when` holds.
  void refuse_rows(const std::string& name, const std::string& event, const std::string& when,
                   const std::string& message) {
    exec_sql(db(), "CREATE FUNCTION " + name +
                       "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF " + when +
                       " THEN RAISE EXCEPTION '" + message +
                       "'; END IF; RETURN NEW; END $$;"
                       "CREATE TRIGGER " +
                       name + " BEFORE " + event + " FOR EACH ROW EXECUTE FUNCTION " + name + "()");
  }

  // One process_due() of `ep` fails as storage trouble whose message holds `message`.
  void expect_batch_fails_with(client::endpoint& ep, const std::string& message) {
    try {
      ep.process_due();
      ADD_FAILURE() << "the batch did not fail with " << message;
    } catch (const storage_error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }

  void expect_each_once(echo_server& server, int n) {
    EXPECT_EQ(server.executions_total(), n);
    EXPECT_EQ(q("SELECT count(*) FROM bills"), n);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200"), n);
    EXPECT_EQ(q("SELECT max(n) FROM results"), 1);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 0);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
    EXPECT_EQ(server.rows().staged, 0);
    EXPECT_EQ(server.rows().executed, 0);
  }

  echo_server_config cfg_;
  std::unique_ptr<test_db> tdb_ = open_pg_db();
};

TEST_F(postgres_invoke_http, each_invocation_executes_once_and_each_follow_up_commits_once) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  queue_bills(5);
  quiesce(*ep);
  expect_each_once(server, 5);
  EXPECT_EQ(server.rows().tombstone, 5);
}

TEST_F(postgres_invoke_http, concurrent_runtime_workers_still_execute_once_and_follow_up_once) {
  echo_server server(cfg_);
  constexpr int n = 60;
  queue_bills(n);
  const std::uint16_t port = server.port();
  auto rt = tdb_->make_runtime(
      [this, port](database c) {
        endpoints eps;
        eps.push_back(billing(c, port));
        return eps;
      },
      {.workers = 4, .idle_poll = std::chrono::milliseconds(5), .batch = 8});
  rt->start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((q("SELECT count(*) FROM results") < n ||
          q("SELECT count(*) FROM exactly_invocations") > 0) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rt->stop();
  expect_each_once(server, n);
}

// A handler that rolls back a savepoint of its own around invoke_http, then commits: in a batch
// whose PUTs are awaited at commit, the id without an invocation row is never PUT (the
// invocations table is asked in one query); the other handler's invocation runs once.
TEST_F(postgres_invoke_http, an_invoke_rolled_back_inside_a_committed_handler_is_never_put) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  ep->on("undone", [url = url_of(server.port())](client::handler_context& ctx) {
    pg::transaction undone(ctx.pg());  // rolled back at the end of the scope
    ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "bill_result"});
  });
  queue_bills(1);
  client::send_in_transaction(db(), "billing", {.id = "u", .type = "undone", .body = {}});
  EXPECT_EQ(ep->process_due(), 2u);  // one batch of two
  quiesce(*ep);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 1);  // o-0's, after its follow-up; none for the undone id
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_attempts"), 0);
}

// A write the batch makes at its own level (a failed attempt's retry record) goes with the next
// round trip; when it fails there, nothing of the batch commits and no PUT of it goes out. Each
// message then runs alone: the bill commits, and the failing message, whose failure the database
// will not record either, stays as it was (no attempt counted) and the error is thrown.
TEST_F(postgres_invoke_http, a_message_whose_failure_cannot_be_recorded_leaves_the_others_be) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  ep->on("fails", [](client::handler_context&) { throw std::runtime_error("the handler fails"); });
  client::send_in_transaction(db(), "billing", {.id = "f", .type = "fails", .body = {}});
  queue_bills(1);
  refuse_rows("refuse_retry", "UPDATE ON exactly_queue", "NEW.attempts > OLD.attempts",
              "retry refused");
  expect_batch_fails_with(*ep, "retry refused");
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(server.rows().staged, 1);  // the bill's, PUT alone; none from the batch
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 1);
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE message_id = 'f'"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 1"), 1);  // post_pending
  exec_sql(db(), "DROP TRIGGER refuse_retry ON exactly_queue");
  quiesce(*ep);  // "f" fails its five attempts, the bill goes through once
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 0);
}

// A write a handler makes through the runtime (its invocation's row) goes with the handler's
// RELEASE; when it fails there, the handler's own write is rolled back with the batch, no POST
// goes out, and the message, refused again alone, is charged an attempt with the refusal as its
// last error. Once the write goes through, the message runs its course once.
TEST_F(postgres_invoke_http, a_write_refused_inside_a_handler_is_charged_and_posts_nothing) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  queue_bills(1);
  refuse_rows("refuse_invocation", "INSERT ON exactly_invocations", "true", "invocation refused");
  EXPECT_EQ(ep->process_due(), 0u);
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 1);
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue WHERE last_error LIKE '%invocation refused%'"),
            1);
  exec_sql(db(), "DROP TRIGGER refuse_invocation ON exactly_invocations");
  quiesce(*ep);
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
}

// A follow-up whose own statement PostgreSQL refuses (a duplicate key), run with its POST's
// answer in the publisher's transaction, fails that attempt only: the answer commits, the
// follow-up is tried again with that response until it is error-queued, and the id is DELETEd.
TEST_F(postgres_invoke_http, a_follow_up_statement_the_database_refuses_fails_that_attempt_only) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port(), {.max_attempts = 3});
  int runs = 0;
  ep->on("bill_result", [&runs](client::handler_context& ctx) {
    ++runs;  // the order is in bills already, from the "bill" handler
    ctx.pg().query("INSERT INTO bills VALUES ($1)",
                   ctx.incoming().body.at("order").get<std::string>());
  });
  queue_bills(2);
  quiesce(*ep);
  EXPECT_EQ(runs, 6);  // max_attempts, each
  EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 2);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 2);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 2);
}

// A follow-up's savepoint is released with the next round trip. When a write of it fails there
// (its row's move past awaiting_follow_up), nothing of the publishing turn commits, so no
// follow-up is left committed without its row's move; so it goes whether the refused follow-up
// ran first, its failure met by the next follow-up's statement, whose handler catches the error
// and goes on, or last, its failure met by the turn's COMMIT. The turn then runs once more with
// its follow-ups queued: each POST is answered again (a replay) and the answers commit. In a
// batch of their own the refused follow-up is charged an attempt and the other commits; once the
// write goes through, each follow-up has committed once.
TEST_F(postgres_invoke_http, a_follow_ups_write_failing_after_its_release_queues_the_turns_ones) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  int swallowed = 0;
  ep->on("bill_result", [&swallowed](client::handler_context& ctx) {
    try {
      ctx.pg().query("INSERT INTO results VALUES ($1, $2, 1)",
                     ctx.incoming().body.at("order").get<std::string>(),
                     static_cast<int>(ctx.response()->status));
    } catch (const storage_error&) {
      ++swallowed;  // the handler goes on as if its statement had only failed
    }
  });
  int executed = 0;
  for (const std::string refused :
       {"o-0", "o-3"}) {  // the first of o-0 and o-1; the last of o-2, o-3
    SCOPED_TRACE(refused);
    {
      database_transaction tx(db());
      for (int i = executed; i < executed + 2; ++i) {
        client::send_in_transaction(db(), "billing",
                                    {.id = std::to_string(i),
                                     .type = "bill",
                                     .body = {{"order", "o-" + std::to_string(i)}}});
      }
      tx.commit();
    }
    ASSERT_EQ(ep->process_due(), 2u);
    refuse_rows("refuse_done", "UPDATE ON exactly_invocations",
                "OLD.state = 2 AND NEW.state = 3 AND OLD.follow_up LIKE '%\"" + refused + "\"%'",
                "done refused");
    swallowed = 0;
    EXPECT_EQ(ep->publish_due(), 2u);
    EXPECT_EQ(swallowed, refused == "o-0" ? 1 : 0);
    executed += 2;
    EXPECT_EQ(server.executions_total(), executed);
    EXPECT_EQ(q("SELECT count(*) FROM results"), executed - 2);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 2"), 2);  // awaiting
    EXPECT_EQ(q("SELECT count(*) FROM exactly_queue WHERE type = 'bill_result'"), 2);
    EXPECT_EQ(ep->process_due(), 1u);  // the batch of both failed; alone, the other committed
    EXPECT_EQ(q("SELECT count(*) FROM results"), executed - 1);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_queue WHERE attempts = 1"), 1);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 1);
    exec_sql(db(),
             "DROP TRIGGER refuse_done ON exactly_invocations;"
             "DROP FUNCTION refuse_done");
    quiesce(*ep);
    EXPECT_EQ(server.executions_total(), executed);
    EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), executed);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 0);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_error_queue"), 0);
  }
}

// A handler's savepoint is released with the next round trip too. When a write of it fails there
// (its invocation's row, refused) and the next handler catches the error its own statement was
// given and goes on, the batch still fails: nothing of it commits and no PUT of it goes out. Each
// message then runs alone, PUTting in its handler: the other bill commits, the refused one is
// charged an attempt, and its PUT is an orphan, DELETEd. Once the write goes through, each bill
// runs its course once.
TEST_F(postgres_invoke_http, a_handlers_write_failing_after_its_release_fails_the_batch) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port(), {.orphan_grace = std::chrono::milliseconds(0)});
  int swallowed = 0;
  ep->on("bill", [&swallowed, url = url_of(server.port())](client::handler_context& ctx) {
    const std::string order = ctx.incoming().body.at("order");
    try {
      ctx.pg().query("INSERT INTO bills VALUES ($1)", order);
    } catch (const storage_error&) {
      ++swallowed;  // the handler goes on as if its statement had only failed
    }
    ctx.invoke_http(url, R"({"status":200})", "application/json",
                    {.type = "bill_result", .body = {{"order", order}}});
  });
  queue_bills(2);
  refuse_rows("refuse_invocation", "INSERT ON exactly_invocations",
              "NEW.follow_up LIKE '%\"o-0\"%'", "invocation refused");
  EXPECT_EQ(ep->process_due(), 1u);
  EXPECT_EQ(swallowed, 1);  // in the batch of two only
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(server.rows().staged, 2);  // one PUT of each bill alone; none of the batch's two
  EXPECT_EQ(q("SELECT count(*) FROM bills WHERE order_id = 'o-1'"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM bills"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 1);
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE message_id = '0'"), 1);
  exec_sql(db(), "DROP TRIGGER refuse_invocation ON exactly_invocations");
  quiesce(*ep);
  EXPECT_EQ(swallowed, 1);
  expect_each_once(server, 2);
}

// The journal entry is committed by a connection of its own: visible to others while the
// handler's transaction is open, and still there after that transaction rolled back, until its
// cleanup DELETE is committed.
TEST_F(postgres_invoke_http, the_journal_outlives_the_handlers_rollback_and_the_id_is_deleted) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port(), {.max_attempts = 1});
  auto observer = tdb_->another();
  std::int64_t journaled_in_handler = -1;
  std::string id;
  ep->on("bill", [&, url = url_of(server.port())](client::handler_context& ctx) {
    id = ctx.invoke_http(url, R"({"status":200})", "application/json", {.type = "bill_result"});
    journaled_in_handler =
        query_int(observer->db(), "SELECT count(*) FROM exactly_attempts WHERE request_id = ?", id);
    throw std::runtime_error("the handler fails after its PUT");
  });
  queue_bills(1);
  EXPECT_EQ(ep->process_due(), 1u);  // max_attempts = 1: to the error queue
  EXPECT_EQ(journaled_in_handler, 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_invocations WHERE state = 3"), 1);  // its DELETE
  quiesce(*ep);
  EXPECT_EQ(server.executions_total(), 0);
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 1);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_attempts"), 0);
}

// On PostgreSQL nothing like SQLite's write lock stops the orphan recovery of another worker
// while a handler is between its PUT and its commit: the attempt's advisory lock does. A
// recovery with no grace at all leaves the running attempt's id alone, and its POST executes.
TEST_F(postgres_invoke_http, the_orphan_recovery_never_takes_an_attempt_still_running) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  auto other_db = tdb_->another();
  auto recoverer =
      billing(other_db->db(), server.port(), {.orphan_grace = std::chrono::milliseconds(0)});
  std::promise<void> put_done;
  std::promise<void> go_on;
  auto go_on_future = go_on.get_future().share();
  ep->on("bill", [&, url = url_of(server.port())](client::handler_context& ctx) {
    ctx.invoke_http(url, R"({"status":200})", "application/json",
                    {.type = "bill_result", .body = {{"order", "o-0"}}});
    put_done.set_value();
    go_on_future.wait();
  });
  queue_bills(1);
  auto handled = std::async(std::launch::async, [&] { return ep->process_due(); });
  put_done.get_future().wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Finds the journal entry; its attempt is still running. (Taking it would also make the
  // recovery wait for the attempt's uncommitted invocation row.)
  auto recovered = std::async(std::launch::async, [&] { return recoverer->publish_due(); });
  EXPECT_EQ(recovered.wait_for(std::chrono::seconds(2)), std::future_status::ready)
      << "the recovery waited for the running attempt";
  auto observer = tdb_->another();  // the recoverer's connection may still be busy
  EXPECT_EQ(query_int(observer->db(), "SELECT count(*) FROM exactly_invocations"), 0)
      << "the running attempt's id was handed to a DELETE";
  go_on.set_value();
  EXPECT_EQ(recovered.get(), 0u);
  EXPECT_EQ(handled.get(), 1u);
  quiesce(*ep);
  recoverer->run_until_idle();  // the entry, its attempt committed now, is dropped
  EXPECT_EQ(server.executions_total(), 1);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200"), 1);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_attempts"), 0);
}

// Sends through `inner`; the first PUT waits until `go_on` is set, once `put_started` is.
class held_put_transport : public client::http_transport {
 public:
  held_put_transport(std::shared_ptr<client::http_transport> inner, std::shared_future<void> go_on)
      : inner_(std::move(inner)), go_on_(std::move(go_on)) {}
  client::http_result send(std::string_view method, std::string_view url,
                           std::string_view content_type, std::string_view body) override {
    if (method == "PUT" && !held_.exchange(true)) {
      put_started.set_value();
      go_on_.wait();
    }
    return inner_->send(method, url, content_type, body);
  }
  void check_url(std::string_view url) const override { inner_->check_url(url); }
  std::promise<void> put_started;

 private:
  std::shared_ptr<client::http_transport> inner_;
  std::shared_future<void> go_on_;
  std::atomic<bool> held_{false};
};

// The same with PUTs awaited at commit (a batch of two): the handlers have committed their
// savepoints, their locks belong to the batch's transaction, and their journal entries are
// visible while the PUTs are in flight; a recovery with no grace still takes none of them.
TEST_F(postgres_invoke_http, the_orphan_recovery_never_takes_a_batch_whose_puts_are_in_flight) {
  echo_server server(cfg_);
  std::promise<void> go_on;
  auto held =
      std::make_shared<held_put_transport>(transport_to(server.port()), go_on.get_future().share());
  auto ep = billing(db(), server.port(), {}, held);
  auto other_db = tdb_->another();
  auto recoverer =
      billing(other_db->db(), server.port(), {.orphan_grace = std::chrono::milliseconds(0)});
  queue_bills(2);
  auto handled = std::async(std::launch::async, [&] { return ep->process_due(); });
  held->put_started.get_future().wait();
  auto observer = tdb_->another();
  EXPECT_EQ(query_int(observer->db(), "SELECT count(*) FROM exactly_attempts"), 2);
  auto recovered = std::async(std::launch::async, [&] { return recoverer->publish_due(); });
  EXPECT_EQ(recovered.wait_for(std::chrono::seconds(2)), std::future_status::ready)
      << "the recovery waited for the running batch";
  EXPECT_EQ(query_int(observer->db(), "SELECT count(*) FROM exactly_invocations"), 0)
      << "a running attempt's id was handed to a DELETE";
  go_on.set_value();
  EXPECT_EQ(recovered.get(), 0u);
  EXPECT_EQ(handled.get(), 2u);
  quiesce(*ep);
  recoverer->run_until_idle();
  EXPECT_EQ(server.executions_total(), 2);
  EXPECT_EQ(q("SELECT count(*) FROM results WHERE status = 200 AND n = 1"), 2);
  EXPECT_EQ(server.rows().staged + server.rows().executed, 0);
  EXPECT_EQ(q("SELECT count(*) FROM exactly_attempts"), 0);
}

// The server lost a staged row it had acknowledged with 201 (a crash taking back its unflushed
// commit): the POST meets 404 request-unknown, the body kept in the invocation row is staged again
// under the same id, and the POST then executes it, once.
TEST_F(postgres_invoke_http, a_staged_row_the_server_lost_is_staged_again_and_executes_once) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  queue_bills(1);
  EXPECT_EQ(ep->process_due(), 1u);
  EXPECT_EQ(
      q("SELECT count(*) FROM exactly_invocations WHERE state = 1 AND"
        " body = convert_to('{\"status\":200}', 'UTF8') AND content_type = 'application/json'"),
      1);
  {
    sqlite::connection s(server.db_path());  // the echo server runs on SQLite here
    s.exec("DELETE FROM exactly_interactions WHERE state = 1");
    ASSERT_EQ(s.changes(), 1);
  }
  quiesce(*ep);
  expect_each_once(server, 1);  // the follow-up saw status 200: the kept body was staged again
  EXPECT_EQ(server.rows().tombstone, 1);
}

// What a process killed between its PUT and its commit leaves: a staged id, journaled. The
// publisher DELETEs it; a journal entry of a committed invoke is only dropped.
TEST_F(postgres_invoke_http, a_put_whose_process_died_before_commit_is_deleted_from_the_journal) {
  echo_server server(cfg_);
  auto ep = billing(db(), server.port());
  const std::string orphan = request_id::mint().to_string();
  http_client c(server.port());
  ASSERT_EQ(c.request("PUT", path_of(orphan), R"({"status":200})", alice).status, 201u);
  client::attempt_journal journal(client::same_database(db().as_postgres()));
  journal.record("billing",
                 {{orphan, "http://127.0.0.1:" + std::to_string(server.port()) + path_of(orphan)}},
                 system_now_ms() - 60'000);
  queue_bills(1);
  quiesce(*ep);
  EXPECT_EQ(server.executions_total(), 1);  // the committed invoke ran, the orphan never did
  EXPECT_EQ(server.rows().staged, 0);
  EXPECT_EQ(server.rows().tombstone, 2);
  EXPECT_TRUE(journal.older_than("billing", system_now_ms(), 10).empty());
}

}  // namespace
}  // namespace exactly::test
