// A connector with several PostgreSQL connections, a storage thread each: which connection each
// thread and each request uses, counted by the backends that wrote the rows.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <pg_cluster.hpp>
#include <requests.hpp>
#include <row_counters.hpp>

#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace exactly::test {
namespace {

constexpr std::size_t connections = 3;

server::connector_options on_postgres(std::size_t n) {
  server::connector_options co;
  co.postgres = pg::options{test_cluster().fresh_schema()};
  co.postgres_connections = n;
  return co;
}

std::int64_t backend_of(database db) {
  return db.query_int64("SELECT pg_backend_pid()").value_or(-1);
}

// Records the backend of every row written to `table` in lane_audit(id, pid).
void audit_writers(pg::connection& db, const std::string& table) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS lane_audit (id TEXT NOT NULL, pid INTEGER NOT NULL);"
      "CREATE OR REPLACE FUNCTION lane_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$"
      " BEGIN INSERT INTO lane_audit VALUES (NEW.id, pg_backend_pid()); RETURN NULL; END $$;"
      "CREATE TRIGGER lane_audit_" +
      table + " AFTER INSERT OR UPDATE ON " + table +
      " FOR EACH ROW EXECUTE FUNCTION lane_audit_row()");
}

constexpr int workers = 6, per_worker = 20;

// Full cycles of fresh ids by `workers` clients in parallel, `per_worker` each: every one
// answered as expected and executed once.
void run_full_cycles(echo_server& server) {
  const int failures = full_cycles_in_parallel(server.port(), workers, per_worker, [&] {
                         return request_id::mint(server.now_ms()).to_string();
                       }).second;
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(server.executions_total(), workers * per_worker);
}

echo_server_config three_connections() {
  echo_server_config cfg;
  cfg.postgres = test_cluster().fresh_schema();
  cfg.postgres_connections = connections;
  cfg.max_staged_per_principal = 1000;
  cfg.metrics_max_age = std::chrono::milliseconds(0);
  return cfg;
}

TEST(storage_lanes, a_connection_count_that_cannot_work_is_refused) {
  EXPECT_THROW(server::connector(on_postgres(0)), std::invalid_argument);
  temp_dir dir;
  server::connector_options sqlite;
  sqlite.db_path = (dir.path() / "server.db").string();
  sqlite.postgres_connections = 2;  // SQLite has one writer
  EXPECT_THROW(server::connector{sqlite}, std::invalid_argument);
  // An unflushed lane needs a connection for it and one for the rest.
  server::connector_options one = on_postgres(1);
  one.postgres_unflushed_lane = true;
  EXPECT_THROW(server::connector{one}, std::invalid_argument);
  sqlite.postgres_connections = 1;
  sqlite.postgres_unflushed_lane = true;
  EXPECT_THROW(server::connector{sqlite}, std::invalid_argument);
  server::connector_options two = on_postgres(2);
  two.postgres_unflushed_lane = true;
  server::connector c(two);
  EXPECT_TRUE(c.unflushed_lane());
}

TEST(storage_lanes, each_thread_uses_the_connection_it_chose) {
  server::connector c(on_postgres(connections));
  ASSERT_EQ(c.connections(), connections);
  std::vector<std::int64_t> backends;
  for (std::size_t i = 0; i < connections; ++i)
    backends.push_back(backend_of(c.storage(i)));
  EXPECT_EQ(std::set<std::int64_t>(backends.begin(), backends.end()).size(), connections);
  EXPECT_EQ(backend_of(c.storage()), backends[0]);  // a thread that chose none: the first
  std::int64_t chosen = -1;
  std::thread t([&] {
    c.use_connection_on_this_thread(2);
    chosen = c.pg().query_int64("SELECT pg_backend_pid()").value_or(-1);
  });
  t.join();
  EXPECT_EQ(chosen, backends[2]);
  EXPECT_EQ(backend_of(c.storage()), backends[0]);  // this thread's choice is its own
  EXPECT_THROW(c.use_connection_on_this_thread(connections), std::out_of_range);
  EXPECT_THROW(c.storage(connections), std::out_of_range);
}

TEST(storage_lanes, each_connection_adds_to_a_counter_shard_of_its_own) {
  server::connector c(on_postgres(connections));
  register_echo_app(c);
  std::vector<std::int64_t> shards;
  for (std::size_t i = 0; i < connections; ++i) {
    shards.push_back(
        c.storage(i).query_int64("SELECT current_setting('exactly.shard')::BIGINT").value_or(-1));
  }
  EXPECT_EQ(std::set<std::int64_t>(shards.begin(), shards.end()).size(), connections);
  for (std::size_t i = 0; i < connections; ++i) {  // one shard claimed each, not every one tried
    EXPECT_EQ(c.storage(i).query_int64(
                  "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                  " AND pid = pg_backend_pid() AND classid = 1702388067 AND objsubid = 2"),
              1);
  }
  // A PUT on the last connection counts its staged row in that connection's shard.
  server::interaction_response put;
  std::thread t([&] {
    c.use_connection_on_this_thread(connections - 1);
    const std::string id = request_id::mint().to_string();
    put = c.handle({verb::put, echo_route, id, "alice", "application/json", R"({"status":201})"});
  });
  t.join();
  ASSERT_EQ(put.status, 201u) << put.body;
  EXPECT_EQ(
      c.storage(0).query_int64("SELECT n FROM exactly_row_counts WHERE kind = 1 AND shard = " +
                               std::to_string(shards.back())),
      1);
  EXPECT_EQ(c.counts().staged, 1);
}

// A counter row removed by hand is made again by the change that finds it gone, a plain one (a
// PUT's staged row) or a change of state (its POST) whose other row is still there: the counts
// stay those of the rows.
TEST(storage_lanes, a_counter_row_removed_by_hand_is_made_again_and_nothing_is_lost) {
  server::connector c(on_postgres(1));
  register_echo_app(c);
  const database db = c.storage(0);
  const std::string shard = std::to_string(
      db.query_int64("SELECT current_setting('exactly.shard')::BIGINT").value_or(-1));
  const auto remove_counter = [&](int kind) {
    db.execute("DELETE FROM exactly_row_counts WHERE kind = " + std::to_string(kind) +
               " AND shard = " + shard);
  };
  const std::string id = request_id::mint().to_string();
  remove_counter(1);
  ASSERT_EQ(c.handle({verb::put, echo_route, id, "alice", "application/json", R"({"status":200})"})
                .status,
            201u);
  EXPECT_EQ(c.counts().staged, 1);
  remove_counter(2);
  ASSERT_EQ(c.handle({verb::post, echo_route, id, "alice", "", ""}).status, 200u);
  EXPECT_EQ(c.counts().staged, 0);
  EXPECT_EQ(c.counts().executed, 1);
  expect_counters_match_rows(db);
}

// A shard setting out of the counters' range (0 to 63), which no connection sets but a hand
// might, counts in the shard of the backend's pid instead, among the rows made in advance.
TEST(storage_lanes, a_shard_setting_out_of_range_counts_in_the_pid_shard) {
  server::connector c(on_postgres(1));
  register_echo_app(c);
  const database db = c.storage(0);
  db.query_int64("SELECT length(set_config('exactly.shard', '99', false))");
  const std::int64_t pid_shard = db.query_int64("SELECT pg_backend_pid() % 64").value_or(-1);
  const std::string id = request_id::mint().to_string();
  ASSERT_EQ(c.handle({verb::put, echo_route, id, "alice", "application/json", R"({"status":200})"})
                .status,
            201u);
  EXPECT_EQ(db.query_int64("SELECT n FROM exactly_row_counts WHERE kind = 1 AND shard = " +
                           std::to_string(pid_shard)),
            1);
  EXPECT_EQ(
      db.query_int64("SELECT count(*) FROM exactly_row_counts WHERE shard NOT BETWEEN 0 AND 63"),
      0);
  EXPECT_EQ(c.counts().staged, 1);
}

// A connection other than the first whose backend went away while it was idle: the connector
// stays ready (it follows the first), the next request on that connection answers 503
// storage-unavailable with nothing written, its rollback resets the connection, and the request
// after it is served on a new backend; the id refused runs its course once when sent again.
TEST(storage_lanes, an_idle_connection_that_lost_its_backend_comes_back_at_a_later_request) {
  server::connector c(on_postgres(connections));
  register_echo_app(c);
  const std::int64_t lost = backend_of(c.storage(2));
  pg::connection admin({test_cluster().fresh_schema()});
  ASSERT_EQ(admin.query_int64("SELECT pg_terminate_backend($1)::int", lost), 1);
  ASSERT_TRUE(eventually([&] {
    return admin.query_int64("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", lost) == 0;
  }));
  const std::string id = request_id::mint().to_string();
  const std::string body = R"({"status":201})";
  server::interaction_response found_gone, put, post;
  std::thread t([&] {
    c.use_connection_on_this_thread(2);
    found_gone = c.handle({verb::put, echo_route, id, "alice", "application/json", body});
    put = c.handle({verb::put, echo_route, id, "alice", "application/json", body});
    post = c.handle({verb::post, echo_route, id, "alice", "", ""});
  });
  t.join();
  EXPECT_EQ(found_gone.status, 503u) << found_gone.body;
  EXPECT_EQ(found_gone.problem, errc::storage_unavailable);
  EXPECT_EQ(put.status, 201u) << put.body;
  EXPECT_EQ(post.status, 201u) << post.body;  // the echo route answers the status it was given
  EXPECT_EQ(post.outcome, "executed");
  EXPECT_TRUE(c.ready());
  EXPECT_NE(backend_of(c.storage(2)), lost);
  EXPECT_EQ(echo_executions(c.storage(0), id), 1);
}

TEST(storage_lanes, every_request_of_an_id_uses_one_connection_and_the_ids_use_them_all) {
  const echo_server_config cfg = three_connections();
  echo_server server(cfg);
  pg::connection audit({cfg.postgres});
  audit_writers(audit, "exactly_interactions");
  run_full_cycles(server);
  // Each id's staged row, execution and tombstone were written, each by one backend.
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT id) FROM lane_audit"), workers * per_worker);
  EXPECT_GE(audit.query_int64("SELECT count(*) FROM lane_audit").value_or(0),
            3 * workers * per_worker);
  EXPECT_EQ(audit.query_int64("SELECT count(*) FROM (SELECT id FROM lane_audit GROUP BY id"
                              " HAVING count(DISTINCT pid) > 1) spread"),
            0);
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT pid) FROM lane_audit"),
            static_cast<std::int64_t>(connections));
  const auto rows = server.rows();
  EXPECT_EQ(rows.tombstone, workers * per_worker);
  EXPECT_TRUE(eventually([&] { return server.outbox_pending() == 0; }));
  // The row counters, each connection's changes in its own shard, agree with the rows by state.
  expect_counters_match_rows(audit);
  EXPECT_GE(audit.query_int64("SELECT count(DISTINCT shard) FROM exactly_row_counts WHERE n <> 0"),
            2);
}

TEST(storage_lanes, user_routes_take_the_connections_in_turn_and_metrics_count_them_all) {
  const echo_server_config cfg = three_connections();
  echo_server server(cfg);
  pg::connection audit({cfg.postgres});
  audit_writers(audit, "plain_writes");
  const std::string timed = R"(exactly_commit_group_requests_timed_total{group="flushed"})";
  const std::int64_t before = server.metric("exactly_commit_group_requests_total");
  const std::int64_t timed_before = server.metric(timed);
  http_client c(server.port());
  constexpr int requests = 30;
  for (int i = 0; i < requests; ++i)
    ASSERT_EQ(c.request("POST", "/plain/p" + std::to_string(i), "{}", alice).status, 200u);
  EXPECT_EQ(audit.query_int64("SELECT count(*) FROM lane_audit"), requests);
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT pid) FROM lane_audit"),
            static_cast<std::int64_t>(connections));
  // One after the other, each request was a commit group of its own, on whichever connection;
  // the times of each connection's are added up too.
  EXPECT_EQ(server.metric("exactly_commit_group_requests_total") - before, requests);
  EXPECT_EQ(server.metric(timed) - timed_before, requests);
}

// connector_options::postgres_unflushed_lane: the staged rows and the tombstones of the PUTs and
// DELETEs, which commit unflushed, are all written by one backend, the executions of the POSTs
// and the user routes' writes by the others; every cycle executes once.
TEST(storage_lanes, an_unflushed_lane_takes_every_put_and_delete_and_nothing_else) {
  echo_server_config cfg = three_connections();
  cfg.postgres_unflushed_lane = true;
  echo_server server(cfg);
  pg::connection audit({cfg.postgres});
  audit.exec(
      "CREATE TABLE state_audit (id TEXT NOT NULL, state SMALLINT NOT NULL, pid INTEGER NOT NULL);"
      "CREATE FUNCTION state_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$"
      " BEGIN INSERT INTO state_audit VALUES (NEW.id, NEW.state, pg_backend_pid()); RETURN NULL;"
      " END $$;"
      "CREATE TRIGGER state_audit AFTER INSERT OR UPDATE ON exactly_interactions"
      " FOR EACH ROW EXECUTE FUNCTION state_audit_row()");
  audit_writers(audit, "plain_writes");
  const std::int64_t unflushed_groups = server.metric("exactly_commit_groups_unflushed_total");
  run_full_cycles(server);
  // The lane's groups committed unflushed: at most one per PUT and DELETE.
  const std::int64_t unflushed =
      server.metric("exactly_commit_groups_unflushed_total") - unflushed_groups;
  EXPECT_GE(unflushed, 1);
  EXPECT_LE(unflushed, 2 * workers * per_worker);
  EXPECT_EQ(audit.query_int64("SELECT count(*) FROM state_audit WHERE state = 1"),
            workers * per_worker);
  EXPECT_EQ(audit.query_int64("SELECT count(*) FROM state_audit WHERE state = 3"),
            workers * per_worker);
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT pid) FROM state_audit WHERE state <> 2"), 1);
  const std::int64_t lane =
      audit.query_int64("SELECT min(pid) FROM state_audit WHERE state = 1").value_or(-1);
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT pid) FROM state_audit WHERE state = 2"),
            static_cast<std::int64_t>(connections - 1));
  EXPECT_EQ(
      audit.query_int64("SELECT count(*) FROM state_audit WHERE state = 2 AND pid = $1", lane), 0);
  http_client c(server.port());
  constexpr int requests = 30;
  for (int i = 0; i < requests; ++i)
    ASSERT_EQ(c.request("POST", "/plain/p" + std::to_string(i), "{}", alice).status, 200u);
  EXPECT_EQ(audit.query_int64("SELECT count(DISTINCT pid) FROM lane_audit"),
            static_cast<std::int64_t>(connections - 1));
  EXPECT_EQ(audit.query_int64("SELECT count(*) FROM lane_audit WHERE pid = $1", lane), 0);
  EXPECT_TRUE(eventually([&] { return server.outbox_pending() == 0; }));
  expect_counters_match_rows(audit);
}

}  // namespace
}  // namespace exactly::test
