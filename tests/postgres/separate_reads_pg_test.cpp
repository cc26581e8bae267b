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

echo_server_config on(const std::string& conninfo) {
  echo_server_config cfg;
  cfg.postgres = conninfo;
  return cfg;
}

// An echo server on a fresh schema, and an id executed there over HTTP.
struct executed_id {
  std::string conninfo = test_cluster().fresh_schema();
  echo_server server{on(conninfo)};
  http_client client{server.port()};
  std::string id = execute_echo(server, client);
};

TEST(separate_reads_pg_over_http, a_get_is_answered_while_the_storage_thread_is_busy) {
  executed_id e;
  expect_a_get_answered_while_the_storage_thread_is_busy(e.server, e.client, e.id);
}

// A GET held up in PostgreSQL (its table locked by another session) holds up no other request:
// the network thread answers /healthz meanwhile, and the GET once the lock is gone.
TEST(separate_reads_pg_over_http, a_get_held_up_in_the_database_holds_up_no_other_request) {
  executed_id e;
  pg::connection hand(pg::options{e.conninfo});
  pg::transaction lock(hand);
  hand.exec("LOCK TABLE exactly_interactions IN ACCESS EXCLUSIVE MODE");
  auto get = std::async(std::launch::async, [&] {
    http_client other(e.server.port());
    return other.request("GET", path_of(e.id), "", alice);
  });
  const auto waiting = [&] {  // the GET's lookup (not a sweep or a write: FOR UPDATE)
    return *hand.query_int64(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE NOT l.granted AND l.relation = 'exactly_interactions'::regclass"
        " AND a.query LIKE 'SELECT owner%' AND a.query NOT LIKE '%FOR UPDATE'");
  };
  for (int i = 0; i < 500 && waiting() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(waiting(), 1);
  auto health = std::async(std::launch::async, [&] { return e.client.request("GET", "/healthz"); });
  const bool answered = health.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  EXPECT_TRUE(answered) << "/healthz waited for the GET";
  EXPECT_EQ(get.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  lock.commit();
  EXPECT_EQ(health.get().status, 200u);
  const auto got = get.get();
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.header("exactly-once-outcome"), "replayed");
}

}  // namespace
}  // namespace exactly::test
