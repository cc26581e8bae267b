// Several runtimes on one PostgreSQL queue: every message is handled by exactly one worker,
// counted by the rows the handlers insert (not by calls that returned).
#include "client_test_db.hpp"
#include "pg_cluster.hpp"

#include <child_process.hpp>
#include <echo_server.hpp>

#include <exactly/client/runtime.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <utility>

namespace exactly::test {
namespace {

// A worker's endpoint whose handler records each message it handles as a row of its own (a
// second handling of one message would be a second row) and takes a little while, so the
// workers' transactions overlap.
any_setup recording_setup(std::string runtime_name) {
  return [runtime_name](database db) {
    endpoints eps;
    eps.push_back(std::make_unique<client::endpoint>("work", db, client::endpoint_options{}));
    eps[0]->on("job", [runtime_name](client::handler_context& ctx) {
      run_sql(ctx.database(), "INSERT INTO handled(message_id, runtime) VALUES (?, ?)",
              ctx.incoming().id, runtime_name);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
    return eps;
  };
}

// A `handled` table for the handlers' rows, and `n` "job" messages job-0..job-(n-1) queued
// for the "work" endpoint in one commit.
void seed_jobs(const database& db, int n) {
  exec_sql(db,
           "CREATE TABLE handled (n BIGSERIAL PRIMARY KEY, message_id TEXT NOT NULL,"
           " runtime TEXT NOT NULL)");
  client::endpoint seeder("work", db, {});
  database_transaction tx(db);
  for (int i = 0; i < n; ++i)
    client::send_in_transaction(db, "work", {.id = "job-" + std::to_string(i), .type = "job"});
  tx.commit();
}

TEST(postgres_shared_queue, two_runtimes_draining_one_queue_handle_each_message_once) {
  auto tdb = open_pg_db();
  const database db = tdb->db();
  constexpr int n = 400;
  seed_jobs(db, n);
  // Two runtimes of two workers each: four connections taking from one queue, as two processes.
  const client::runtime_options opts{
      .workers = 2, .idle_poll = std::chrono::milliseconds(5), .batch = 8};
  auto a = tdb->make_runtime(recording_setup("a"), opts);
  auto b = tdb->make_runtime(recording_setup("b"), opts);
  a->start();
  b->start();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (query_int(db, "SELECT count(*) FROM exactly_queue") > 0 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  a->stop();
  b->stop();

  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_queue"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT message_id) FROM handled"), n);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM handled"), n) << "a message was handled twice";
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_error_queue"), 0);
  // Both runtimes took part, or the test proved nothing about sharing.
  EXPECT_GT(query_int(db, "SELECT count(*) FROM handled WHERE runtime = 'a'"), 0);
  EXPECT_GT(query_int(db, "SELECT count(*) FROM handled WHERE runtime = 'b'"), 0);
}

// A worker whose batch is held in another's open transaction takes the next due messages, not
// none: with the claim apart from the read, both read the same oldest messages and all but one
// came away empty while the first one's handlers ran.
TEST(postgres_shared_queue, a_worker_passes_over_the_messages_another_holds_and_takes_the_next) {
  auto tdb = open_pg_db();
  const database db = tdb->db();
  seed_jobs(db, 16);
  // A's first handler waits, inside A's batch transaction, until B has had its turn (at most 5 s,
  // so that a B waiting on A's rows cannot hang the test).
  std::promise<void> a_inside;
  std::promise<void> b_done;
  std::shared_future<void> b_finished = b_done.get_future().share();
  auto a_db = tdb->another();
  client::endpoint a("work", a_db->db(), {});
  bool a_waited_out = false;  // B did not finish while A held its batch: B waited on A's locks
  a.on("job", [&, first = true](client::handler_context& ctx) mutable {
    run_sql(ctx.database(), "INSERT INTO handled(message_id, runtime) VALUES (?, 'a')",
            ctx.incoming().id);
    if (std::exchange(first, false)) {
      a_inside.set_value();
      a_waited_out = b_finished.wait_for(std::chrono::seconds(5)) == std::future_status::timeout;
    }
  });
  auto b_db = tdb->another();
  client::endpoint b("work", b_db->db(), {});
  b.on("job", [](client::handler_context& ctx) {
    run_sql(ctx.database(), "INSERT INTO handled(message_id, runtime) VALUES (?, 'b')",
            ctx.incoming().id);
  });
  std::size_t a_handled = 0;
  std::thread a_worker([&] { a_handled = a.process_due(8); });
  a_inside.get_future().wait();
  const std::size_t b_handled = b.process_due(8);
  b_done.set_value();
  a_worker.join();

  EXPECT_FALSE(a_waited_out) << "B waited for A's messages instead of passing over them";
  EXPECT_EQ(a_handled, 8u);
  EXPECT_EQ(b_handled, 8u) << "B came away with less than the next 8 while A held the first 8";
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM handled WHERE runtime = 'b' AND message_id IN"
                      " ('job-8','job-9','job-10','job-11','job-12','job-13','job-14',"
                      "'job-15')"),
            8);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM handled"), 16) << "a message was handled twice";
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT message_id) FROM handled"), 16);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_queue"), 0);
}

// Endpoints of processes starting at once migrate the same schema: one waits for the other.
TEST(postgres_shared_queue, endpoints_starting_at_once_on_a_new_schema_all_start) {
  auto tdb = open_pg_db();
  std::vector<std::thread> starters;
  std::atomic<int> started{0};
  std::atomic<int> failed{0};
  for (int i = 0; i < 6; ++i) {
    starters.emplace_back([&] {
      try {
        auto own = tdb->another();
        client::endpoint ep("work", own->db(), {});
        ++started;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failed;
      }
    });
  }
  for (auto& t : starters)
    t.join();
  EXPECT_EQ(started.load(), 6);
  EXPECT_EQ(failed.load(), 0);
}

// Two client processes (client-crash-driver --postgres=) seed and drain one queue together, each
// invoking the echo server, with no orphan grace at all: each one's orphan recovery sees the
// other's journal entries at once and must leave those of running attempts alone.
TEST(postgres_shared_queue, two_processes_on_one_queue_invoke_each_order_once) {
  temp_dir dir;
  const std::string server_db = (dir.path() / "server.db").string();
  const std::string conninfo = test_cluster().fresh_schema();
  echo_server_process server(server_db, 0);
  constexpr int orders = 40;
  const std::vector<std::string> driver = {EXACTLY_CLIENT_DRIVER, "--postgres=" + conninfo,
                                           std::to_string(server.port()), std::to_string(orders)};
  {
    child_process first(driver);
    child_process second(driver);
    EXPECT_EQ(first.wait_exit(), 0);
    EXPECT_EQ(second.wait_exit(), 0);
  }
  EXPECT_EQ(server.terminate(), 0);
  sqlite::connection s(server_db);
  EXPECT_EQ(s.query_int64("SELECT sum(n) FROM echo_executions"), orders);
  EXPECT_EQ(s.query_int64("SELECT max(n) FROM echo_executions"), 1);
  EXPECT_EQ(s.query_int64("SELECT count(*) FROM exactly_interactions WHERE state <= 2"), 0);
  auto client = open_pg_db(conninfo);
  const database db = client->db();
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM bills"), orders);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM results WHERE status = 200"), orders);
  EXPECT_EQ(query_int(db, "SELECT max(n) FROM results"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_invocations"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM exactly_error_queue"), 0);
}

}  // namespace
}  // namespace exactly::test
