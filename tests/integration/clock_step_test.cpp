// A server clock that runs fast and is then set back: the protocol decides no earlier than the
// highest time it has used, in one process, across a restart and across instances sharing the
// store, so a consumed id is never staged or executed again. Counted in the database. Runs on
// SQLite, and on PostgreSQL with EXACTLY_TEST_ENGINE=postgres.
#include <echo_server.hpp>

#include <exactly/common/request_id.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

namespace exactly::test {
namespace {

constexpr std::int64_t hour_ms = 3600LL * 1000;

// Connectors over one database, each with a clock the test sets: system time plus an offset.
class clock_step : public ::testing::Test {
 protected:
  struct instance {
    std::atomic<std::int64_t> offset_ms{0};
    std::unique_ptr<server::connector> c;
  };

  // A connector over this test's database whose clock reads system time + `offset_ms`.
  std::unique_ptr<instance> open(std::int64_t offset_ms = 0) {
    auto in = std::make_unique<instance>();
    in->offset_ms = offset_ms;
    server::connector_options co;
    co.db_path = (dir_.path() / "server.db").string();
    if (!postgres_.empty())
      co.postgres = pg::options{postgres_};
    co.clock = [p = in.get()] { return system_now_ms() + p->offset_ms.load(); };
    in->c = std::make_unique<server::connector>(co);
    register_echo_app(*in->c);
    return in;
  }

  static server::interaction_response send(instance& in, verb v, const std::string& id,
                                           std::string_view body = "") {
    return in.c->handle({v, echo_route, id, "alice", "application/json", body});
  }

  // PUT, POST and DELETE of a fresh id minted now: executed once, then a tombstone.
  static std::string consume(instance& in) {
    const std::string id = request_id::mint(system_now_ms()).to_string();
    EXPECT_EQ(send(in, verb::put, id, R"({"status":200,"reply":1})").status, 201u);
    EXPECT_EQ(send(in, verb::post, id).outcome, "executed");
    EXPECT_EQ(send(in, verb::delete_, id).status, 204u);
    return id;
  }

  static std::int64_t executions(instance& in, const std::string& id) {
    return echo_executions(in.c->storage(), id);
  }

  temp_dir dir_;
  std::string postgres_ = echo_server_config::default_test_postgres();
};

// The attack of the hardening review: the clock 2 h ahead for one sweep purges a tombstone; with
// the clock corrected, a delayed PUT of that id must not be staged and its POST must not execute.
TEST_F(clock_step, a_purge_by_a_fast_clock_does_not_let_a_consumed_id_run_again) {
  auto a = open();
  const std::string id = consume(*a);
  a->offset_ms = 2 * hour_ms;
  EXPECT_EQ(a->c->sweep().purged_tombstones, 1);
  a->offset_ms = 0;
  const auto put = send(*a, verb::put, id, R"({"status":200,"reply":1})");
  EXPECT_EQ(put.status, 410u);
  EXPECT_EQ(put.problem, errc::request_too_old);
  EXPECT_NE(send(*a, verb::post, id).outcome, "executed");
  EXPECT_EQ(executions(*a, id), 1);
  EXPECT_EQ(a->c->stats().clock_step_backs, 1);
}

// The same after a restart: the time the sweep used was persisted with its work.
TEST_F(clock_step, a_restart_with_the_clock_set_back_decides_no_earlier_than_the_last_sweep) {
  std::string id;
  {
    auto a = open();
    id = consume(*a);
    a->offset_ms = 2 * hour_ms;
    EXPECT_EQ(a->c->sweep().purged_tombstones, 1);
  }
  auto restarted = open(0);
  EXPECT_EQ(send(*restarted, verb::put, id, R"({"status":200,"reply":1})").status, 410u);
  EXPECT_NE(send(*restarted, verb::post, id).outcome, "executed");
  EXPECT_EQ(executions(*restarted, id), 1);
}

// The same across instances: one with a fast clock sweeps; another, started before and never
// fast, reads the persisted time before it decides on an unknown id.
TEST_F(clock_step, an_instance_with_a_correct_clock_sees_the_time_another_purged_by) {
  auto slow = open(0);
  auto fast = open(0);
  const std::string id = consume(*slow);
  fast->offset_ms = 2 * hour_ms;
  EXPECT_EQ(fast->c->sweep().purged_tombstones, 1);
  EXPECT_EQ(send(*slow, verb::put, id, R"({"status":200,"reply":1})").status, 410u);
  EXPECT_NE(send(*slow, verb::post, id).outcome, "executed");
  EXPECT_EQ(executions(*slow, id), 1);
}

// An expiry that a fast clock let a request see is written down by that request, so the answer
// it got (gone) still holds once the clock is set back, in this process and after a restart
// (no sweep ran, so no persisted time covers it): the staged id never executes.
TEST_F(clock_step, an_expiry_seen_by_a_fast_clock_holds_after_the_clock_is_set_back) {
  const std::string id = request_id::mint(system_now_ms()).to_string();
  {
    auto a = open();
    ASSERT_EQ(send(*a, verb::put, id, R"({"status":200,"reply":1})").status, 201u);
    a->offset_ms = 25 * hour_ms;  // past the staged TTL (24 h), no sweep
    const auto late = send(*a, verb::post, id);
    EXPECT_EQ(late.status, 410u);
    EXPECT_EQ(late.problem, errc::request_expired);
    a->offset_ms = 0;
    EXPECT_EQ(send(*a, verb::post, id).problem, errc::request_expired);
  }
  auto restarted = open(0);
  const auto again = send(*restarted, verb::post, id);
  EXPECT_EQ(again.status, 410u);
  EXPECT_EQ(again.problem, errc::request_expired);
  EXPECT_EQ(executions(*restarted, id), 0);
}

// Decisions take the highest time used even before any sweep: a PUT accepted at a fast time is
// still judged by that time after the clock goes back.
TEST_F(clock_step, the_protocol_time_does_not_go_back_with_the_clock) {
  auto a = open();
  a->offset_ms = 2 * hour_ms;
  const std::string early = request_id::mint(system_now_ms()).to_string();  // 2 h old by now
  EXPECT_EQ(send(*a, verb::put, early, R"({"status":200,"reply":1})").status, 410u);
  a->offset_ms = 0;
  EXPECT_EQ(send(*a, verb::put, early, R"({"status":200,"reply":1})").status, 410u);
  EXPECT_EQ(a->c->stats().clock_step_backs, 1);
}

}  // namespace
}  // namespace exactly::test
