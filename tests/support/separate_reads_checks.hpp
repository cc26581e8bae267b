#pragma once
// Test helper: what a GET read apart (connector::read) promises, on either engine: only
// committed executions are seen, a rolled-back one never, and over HTTP the GET does not wait
// for a busy storage thread.

#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/database.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/server/connector.hpp>

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace exactly::test {

inline server::interaction_request echo_request(verb v, const std::string& id,
                                                std::string_view body = "") {
  return {v, echo_route, id, "alice", "application/json", body};
}

// A fresh id staged by alice on the echo app of `c`, whose execution answers 200 {"reply":"r"}.
inline std::string stage_echo(server::connector& c) {
  const std::string id = request_id::mint().to_string();
  EXPECT_EQ(c.handle(echo_request(verb::put, id, R"({"status":200,"reply":"r"})")).status, 201u);
  return id;
}

inline void expect_a_get_sees_an_execution_only_once_its_group_has_committed(server::connector& c) {
  ASSERT_TRUE(c.has_separate_reads());
  const std::string id = stage_echo(c);
  {
    database_transaction group(c.storage());  // what a commit group holds open around requests
    ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "executed");
    const auto during = c.read(echo_request(verb::get, id));
    EXPECT_EQ(during.status, 409u);
    EXPECT_EQ(during.problem, errc::not_executed);
    group.commit();
  }
  const auto after = c.read(echo_request(verb::get, id));
  EXPECT_EQ(after.status, 200u);
  EXPECT_EQ(after.outcome, "replayed");
  EXPECT_EQ(after.body, R"({"reply":"r"})");
  EXPECT_EQ(c.stats().replays, 1);
}

inline void expect_a_rolled_back_execution_is_never_read(server::connector& c) {
  const std::string id = stage_echo(c);
  {
    database_transaction group(c.storage());
    ASSERT_EQ(c.handle(echo_request(verb::post, id)).outcome, "executed");
  }  // the group's COMMIT never happened
  EXPECT_EQ(c.read(echo_request(verb::get, id)).problem, errc::not_executed);
  EXPECT_EQ(c.handle(echo_request(verb::post, id)).outcome, "executed");
  EXPECT_EQ(echo_executions(c.storage(), id), 1);
}

// `id` executed on `server` with the reply "r": a GET is answered while the storage thread is
// held by other work.
inline void expect_a_get_answered_while_the_storage_thread_is_busy(echo_server& server,
                                                                   http_client& client,
                                                                   const std::string& id) {
  std::promise<void> busy, release;
  bool timed_out = false;
  std::thread blocker([&] {
    server.http().run_on_storage([&] {
      busy.set_value();
      timed_out =
          release.get_future().wait_for(std::chrono::seconds(5)) == std::future_status::timeout;
    });
  });
  busy.get_future().wait();
  const auto got = client.request("GET", path_of(id), "", alice);
  release.set_value();
  blocker.join();
  EXPECT_FALSE(timed_out) << "the GET waited for the storage thread";
  EXPECT_EQ(got.status, 200u);
  EXPECT_EQ(got.header("exactly-once-outcome"), "replayed");
  EXPECT_EQ(got.body, R"({"reply":"r"})");
}

// PUT and POST of a fresh id on `server` through `client`, answered 200 {"reply":"r"}.
inline std::string execute_echo(echo_server& server, http_client& client) {
  const std::string id = request_id::mint(server.now_ms()).to_string();
  EXPECT_EQ(client.request("PUT", path_of(id), R"({"status":200,"reply":"r"})", alice).status,
            201u);
  EXPECT_EQ(client.request("POST", path_of(id), "", alice).status, 200u);
  return id;
}

}  // namespace exactly::test
