// The connector inside a commit group (an outer transaction on its connection): GETs read
// through the read-only connection see only committed executions and never wait for the storage
// thread; executions and replays are counted only once their group has committed.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>
#include <separate_reads_checks.hpp>

#include <exactly/common/clock.hpp>
#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {
using exactly::verb;

// A connector with the echo app on a fresh database file.
class echo_connector : public ::testing::Test {
 protected:
  echo_connector() { register_echo_app(c_); }
  std::string staged() { return stage_echo(c_); }

  temp_dir dir_;
  server::connector c_{{.db_path = (dir_.path() / "server.db").string()}};
};
using separate_reads = echo_connector;
using durable_counts = echo_connector;
using unflushed_requests = echo_connector;

// Which requests may be committed unflushed, and what one that may not be does when it was:
// deciding that an unknown id is too old needs its time persisted, flushed, so an unflushed
// request answers 503 (try again) and writes nothing.
TEST_F(unflushed_requests, only_puts_and_deletes_of_ids_well_inside_the_window) {
  constexpr std::int64_t hour = 3600 * 1000;
  const std::int64_t now = system_now_ms();
  const std::string fresh = request_id::mint(now).to_string();
  const std::string edge = request_id::mint(now - hour + 30'000).to_string();
  const std::string old = request_id::mint(now - 2 * hour).to_string();
  EXPECT_TRUE(c_.may_defer_flush(echo_request(verb::put, fresh)));
  EXPECT_TRUE(c_.may_defer_flush(echo_request(verb::delete_, fresh)));
  EXPECT_FALSE(c_.may_defer_flush(echo_request(verb::post, fresh)));
  EXPECT_FALSE(c_.may_defer_flush(echo_request(verb::get, fresh)));
  EXPECT_FALSE(c_.may_defer_flush(echo_request(verb::put, edge)));
  EXPECT_FALSE(c_.may_defer_flush(echo_request(verb::put, old)));
  EXPECT_FALSE(c_.may_defer_flush(echo_request(verb::put, "not-an-id")));

  const auto floor = [&] {
    return c_.db().query_int64("SELECT high_water_ms FROM exactly_clock").value_or(0);
  };
  for (const verb v : {verb::put, verb::delete_}) {
    const std::int64_t before = floor();
    auto r = echo_request(v, old, R"({"status":200})");
    r.unflushed = true;  // as a race between the dispatch and the decision would leave it
    const auto answer = c_.handle(r);
    EXPECT_EQ(answer.status, 503u);
    EXPECT_EQ(answer.problem, errc::storage_unavailable);
    EXPECT_EQ(floor(), before);  // nothing written
    r.unflushed = false;
    EXPECT_EQ(c_.handle(r).status, v == verb::put ? 410u : 204u);
    EXPECT_GE(floor(), now);
  }
  EXPECT_EQ(c_.db().query_int64("SELECT count(*) FROM exactly_interactions"), 0);
}

TEST_F(separate_reads, a_get_sees_an_execution_only_once_its_group_has_committed) {
  expect_a_get_sees_an_execution_only_once_its_group_has_committed(c_);
}

TEST_F(separate_reads, a_rolled_back_execution_is_never_read) {
  expect_a_rolled_back_execution_is_never_read(c_);
}

TEST_F(separate_reads, read_is_for_gets_on_file_databases_only) {
  server::connector in_memory({.db_path = ":memory:"});
  EXPECT_FALSE(in_memory.has_separate_reads());
  server::connector opted_out(
      {.db_path = (dir_.path() / "a.db").string(), .separate_reads = false});
  EXPECT_FALSE(opted_out.has_separate_reads());
  const std::string id = request_id::mint().to_string();
  EXPECT_THROW(in_memory.read(echo_request(verb::get, id)), std::logic_error);
  EXPECT_THROW(c_.read(echo_request(verb::post, id)), std::logic_error);
  EXPECT_EQ(c_.read(echo_request(verb::get, id)).status, 404u);
  EXPECT_EQ(c_.read(echo_request(verb::get, "not-an-id")).problem, errc::invalid_request_id);
  server::connector rollback_journal(
      {.db_path = (dir_.path() / "c.db").string(), .db = {.wal = false}});
  EXPECT_FALSE(rollback_journal.has_separate_reads());  // readers would contend with the writer
}

TEST_F(durable_counts, executions_and_replays_count_once_their_group_commits) {
  server::connector& c = c_;
  const std::string id = staged();
  // A row that breaks a deferred foreign key makes the group's COMMIT itself fail.
  c.db().exec(
      "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
      "CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
  {
    sqlite::transaction group(c.db());
    ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "executed");
    EXPECT_EQ(c.stats().executions, 0);  // not durable yet
    c.db().exec("INSERT INTO child VALUES (42)");
    EXPECT_THROW(group.commit(), sqlite::error);
  }
  EXPECT_EQ(c.stats().executions, 0);
  EXPECT_EQ(echo_executions(c.db(), id), 0);
  {
    sqlite::transaction group(c.db());
    ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "executed");
    ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "replayed");
    ASSERT_EQ(c.handle(echo_request(verb::get, id)).outcome, "replayed");
    EXPECT_EQ(c.stats().executions + c.stats().replays, 0);
    group.commit();
  }
  EXPECT_EQ(c.stats().executions, 1);
  EXPECT_EQ(c.stats().replays, 2);
  ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "replayed");  // no group: at once
  EXPECT_EQ(c.stats().replays, 3);
  EXPECT_EQ(echo_executions(c.db(), id), 1);
}

TEST(separate_reads_over_http, a_get_is_answered_while_the_storage_thread_is_busy) {
  echo_server server;
  http_client client(server.port());
  const std::string id = execute_echo(server, client);
  expect_a_get_answered_while_the_storage_thread_is_busy(server, client, id);
}

}  // namespace
}  // namespace exactly::test
