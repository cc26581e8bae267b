// GETs on PostgreSQL through a connection of their own, on a thread of their own: they see only
// committed executions, never wait for the storage thread, and never hold the network thread.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <pg_cluster.hpp>
#include <requests.hpp>
#include <separate_reads_checks.hpp>

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace exactly::test {
namespace {

server::connector_options on_postgres(bool separate_reads = true) {
  server::connector_options co;
  co.postgres = pg::options{test_cluster().fresh_schema()};
  co.separate_reads = separate_reads;
  return co;
}

class separate_reads_pg : public ::testing::Test {
 protected:
  separate_reads_pg() { register_echo_app(c_); }
  server::connector c_{on_postgres()};
};

TEST_F(separate_reads_pg, reads_take_a_connection_of_their_own_unless_opted_out) {
  EXPECT_TRUE(c_.has_separate_reads());
  EXPECT_TRUE(c_.reads_take_a_round_trip());
  server::connector opted_out(on_postgres(false));
  EXPECT_FALSE(opted_out.has_separate_reads());
  EXPECT_FALSE(opted_out.reads_take_a_round_trip());
  EXPECT_THROW(opted_out.read(echo_request(verb::get, request_id::mint().to_string())),
               std::logic_error);
  temp_dir dir;
  server::connector on_sqlite({.db_path = (dir.path() / "server.db").string()});
  EXPECT_TRUE(on_sqlite.has_separate_reads());
  EXPECT_FALSE(on_sqlite.reads_take_a_round_trip());  // read on the network thread
}

TEST_F(separate_reads_pg, a_get_sees_an_execution_only_once_its_group_has_committed) {
  expect_a_get_sees_an_execution_only_once_its_group_has_committed(c_);
}

TEST_F(separate_reads_pg, a_rolled_back_execution_is_never_read) {
  expect_a_rolled_back_execution_is_never_read(c_);
}

// An echo server on a fresh schema, and an id executed there over HTTP.
struct executed_id {
  explicit executed_id(std::chrono::milliseconds read_lock_timeout = std::chrono::milliseconds(50))
      : server([&] {
          echo_server_config cfg;
          cfg.postgres = conninfo;
          cfg.read_lock_timeout = read_lock_timeout;
          return cfg;
        }()) {}
  // GET of the id, from a client of its own.
  test_response get() {
    http_client other(server.port());
    return other.request("GET", path_of(id), "", alice);
  }

  std::string conninfo = test_cluster().fresh_schema();
  echo_server server;
  http_client client{server.port()};
  std::string id = execute_echo(server, client);
};

// Another session holding exactly_interactions locked exclusively (as DDL or VACUUM FULL do),
// until release() or the end of the scope.
class table_lock {
 public:
  explicit table_lock(const std::string& conninfo) : hand_(pg::options{conninfo}), lock_(hand_) {
    hand_.exec("LOCK TABLE exactly_interactions IN ACCESS EXCLUSIVE MODE");
  }
  std::int64_t pid() { return *hand_.query_int64("SELECT pg_backend_pid()"); }
  void release() { lock_.commit(); }

 private:
  pg::connection hand_;
  pg::transaction lock_;
};

// The backend of the GET lookup that `holder` holds up, waited for (5 s at most), else 0. Asked
// in autocommit: a transaction keeps its first view of pg_stat_activity.
std::int64_t reader_held_up_by(pg::connection& watcher, std::int64_t holder) {
  for (int i = 0; i < 500; ++i) {
    const std::int64_t pid = *watcher.query_int64(
        "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))"
        " AND query LIKE 'SELECT owner%' AND query NOT LIKE '%FOR UPDATE'",
        holder);
    if (pid != 0)
      return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

TEST(separate_reads_pg_over_http, a_get_is_answered_while_the_storage_thread_is_busy) {
  executed_id e;
  expect_a_get_answered_while_the_storage_thread_is_busy(e.server, e.client, e.id);
}

// A GET held up in PostgreSQL holds up neither the writes nor the network thread: /healthz is
// answered meanwhile, and the GET once the lock is gone.
TEST(separate_reads_pg_over_http, a_get_held_up_in_the_database_holds_up_no_other_request) {
  executed_id e(std::chrono::seconds(60));
  std::future<test_response> get, health;  // destroyed after the lock (the GET waits on it)
  table_lock lock(e.conninfo);
  get = std::async(std::launch::async, [&] { return e.get(); });
  pg::connection watcher(pg::options{e.conninfo});
  EXPECT_NE(reader_held_up_by(watcher, lock.pid()), 0);
  health = std::async(std::launch::async, [&] { return e.client.request("GET", "/healthz"); });
  const bool answered = health.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  EXPECT_TRUE(answered) << "/healthz waited for the GET";
  EXPECT_EQ(get.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  lock.release();
  EXPECT_EQ(health.get().status, 200u);
  const test_response got = get.get();
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.header("exactly-once-outcome"), "replayed");
}

// Past connector_options::read_lock_timeout the GET is answered 503, to be tried again.
TEST(separate_reads_pg_over_http, a_get_held_up_past_the_lock_timeout_is_answered_503) {
  executed_id e;  // 50 ms
  std::future<test_response> get;
  table_lock lock(e.conninfo);
  get = std::async(std::launch::async, [&] { return e.get(); });
  ASSERT_EQ(get.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const test_response refused = get.get();
  EXPECT_EQ(refused.status, 503u);
  EXPECT_NE(refused.body.find("storage-unavailable"), std::string::npos) << refused.body;
  lock.release();
  EXPECT_EQ(e.get().status, 200u);
}

// The GETs' connection lost (its backend ended, as in a PostgreSQL restart): the next GET reopens
// it and is answered, not refused.
TEST(separate_reads_pg_over_http, a_get_after_its_connection_was_lost_is_answered) {
  executed_id e(std::chrono::seconds(60));
  pg::connection watcher(pg::options{e.conninfo});
  std::int64_t reader = 0;
  {
    std::future<test_response> get;
    table_lock lock(e.conninfo);  // to find the reader's backend: the one it holds up
    get = std::async(std::launch::async, [&] { return e.get(); });
    reader = reader_held_up_by(watcher, lock.pid());
    lock.release();
    EXPECT_EQ(get.get().status, 200u);
  }
  ASSERT_NE(reader, 0);
  ASSERT_EQ(watcher.query_int64("SELECT pg_terminate_backend($1)::INT", reader), 1);
  for (int i = 0;
       i < 500 &&
       *watcher.query_int64("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", reader) != 0;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const test_response got = e.get();
  EXPECT_EQ(got.status, 200u) << got.body;
  EXPECT_EQ(got.header("exactly-once-outcome"), "replayed");
}

}  // namespace
}  // namespace exactly::test
