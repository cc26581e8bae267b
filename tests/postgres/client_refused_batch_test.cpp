// Batches that PostgreSQL refuses as a whole (a constraint checked at COMMIT, a handler that
// swallows its statement's error without a savepoint of its own): each message runs alone, the
// others commit, and the one refused alone is charged attempts until the error queue. A lost
// connection or a deadlock that a handler swallows is storage trouble instead, charged to no
// message.
#include "client_test_db.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/storage_error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace exactly::test {
namespace {

class postgres_refused_batch : public ::testing::Test {
 protected:
  postgres_refused_batch() {
    exec_sql(db(), "CREATE TABLE keys (k TEXT UNIQUE DEFERRABLE INITIALLY DEFERRED)");
    ep_.on("add", [this](client::handler_context& ctx) {
      ++runs_;
      const std::string k = ctx.incoming().body.at("k");
      if (k == "deadlock" && !lost_once_) {
        lost_once_ = true;
        try {
          ctx.pg().query(
              "DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$");
        } catch (const storage_error&) {
          // and returns as if nothing had happened
        }
        return;
      }
      if (k == "lost" && !lost_once_) {
        lost_once_ = true;
        try {
          ctx.pg().query("SELECT pg_terminate_backend(pg_backend_pid())");
        } catch (const storage_error&) {
          // and returns as if nothing had happened
        }
        return;
      }
      if (k != "swallowed") {
        ctx.pg().query("INSERT INTO keys VALUES ($1)", k);
        return;
      }
      try {
        ctx.pg().query("SELECT 1 / 0");
      } catch (const storage_error&) {
        // and returns as if the transaction could go on
      }
    });
  }
  database db() { return tdb_->db(); }
  std::int64_t q(const char* sql) { return query_int(db(), sql); }

  // Three "add" messages, m-1 to m-3, with keys "a", `second` and "c", for one batch; then a
  // batch fails, each message runs alone, and only m-2 is refused alone: charged one attempt,
  // then error-queued with `error` at its second.
  void expect_only_the_second_is_charged(const std::string& second, const std::string& error) {
    const std::string keys[] = {"a", second, "c"};
    database_transaction tx(db());
    for (int i = 0; i < 3; ++i) {
      client::send_in_transaction(
          db(), "keys",
          {.id = "m-" + std::to_string(i + 1), .type = "add", .body = {{"k", keys[i]}}});
    }
    tx.commit();
    EXPECT_EQ(ep_.process_due(), 2u);
    EXPECT_EQ(q("SELECT count(*) FROM keys WHERE k IN ('a', 'c')"), 2);
    EXPECT_EQ(q("SELECT count(*) FROM keys"), 2);
    EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE message_id = 'm-2'"), 1);
    EXPECT_EQ(q("SELECT count(*) FROM exactly_queue"), 1);
    for (int i = 0; i < 200 && ep_.queued() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past its backoff
      ep_.process_due();
    }
    EXPECT_EQ(q("SELECT count(*) FROM keys"), 2);
    EXPECT_EQ(ep_.queued(), 0);
    const auto errors = ep_.errors();
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].msg.id, "m-2");
    EXPECT_NE(errors[0].error.find(error), std::string::npos) << errors[0].error;
    EXPECT_EQ(runs_, 3 + 3 + 1);  // the batch, each alone, m-2's second attempt
  }

  std::unique_ptr<test_db> tdb_ = open_pg_db();
  client::endpoint ep_{"keys",
                       db(),
                       {.max_attempts = 2,
                        .retry_base = std::chrono::milliseconds(1),
                        .retry_cap = std::chrono::milliseconds(1)}};
  int runs_ = 0;
  bool lost_once_ = false;  // the "lost" or "deadlock" message failed once
};

// Two messages adding one key that a unique constraint checks at COMMIT: the batch's COMMIT
// fails. Alone, m-1 commits and m-2's COMMIT fails against it: m-2 is charged, not the batch.
TEST_F(postgres_refused_batch,
       a_constraint_checked_at_commit_is_charged_to_the_message_breaking_it) {
  expect_only_the_second_is_charged("a", "duplicate key");
}

// A handler that catches its statement's error without a savepoint of its own leaves the
// transaction refusing every statement: the runtime's next write of the batch fails. Alone, only
// that handler's message meets it.
TEST_F(postgres_refused_batch, a_handler_swallowing_its_error_is_charged_alone) {
  expect_only_the_second_is_charged("swallowed", "current transaction is aborted");
}

// The connection lost under a handler that catches the error and returns is not a refusal: the
// batch fails as storage trouble, charged to no message, and commits once PostgreSQL is back.
TEST_F(postgres_refused_batch, a_connection_lost_under_a_handler_catching_it_is_charged_to_none) {
  ep_.send("keys", {.id = "m-1", .type = "add", .body = {{"k", "lost"}}});
  try {
    ep_.process_due();
    FAIL() << "a batch whose connection was lost under its handler committed";
  } catch (const storage_error& e) {
    EXPECT_TRUE(e.storage_failure()) << e.what();
    // Found by the check after the handler, not by a later statement of the runtime's.
    EXPECT_NE(std::string(e.what()).find("lost under the handler"), std::string::npos) << e.what();
  }
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE message_id = 'm-1'"), 0);
  EXPECT_EQ(ep_.process_due(), 1u);  // on a new connection
  EXPECT_EQ(q("SELECT count(*) FROM keys WHERE k = 'lost'"), 1);
  EXPECT_EQ(ep_.queued(), 0);
  EXPECT_TRUE(ep_.errors().empty());
  EXPECT_EQ(runs_, 2);
}

// Storage trouble that a handler catches without a savepoint of its own (a deadlock) is not
// its refusal either: the runtime's next statement, refused because the transaction is aborted,
// reports the deadlock, and the batch fails as storage trouble, charged to no message.
TEST_F(postgres_refused_batch, a_deadlock_a_handler_caught_is_charged_to_none) {
  ep_.send("keys", {.id = "m-1", .type = "add", .body = {{"k", "deadlock"}}});
  try {
    ep_.process_due();
    FAIL() << "a batch whose transaction a deadlock aborted committed";
  } catch (const pg::error& e) {
    EXPECT_EQ(e.sqlstate(), "40P01") << e.what();
    EXPECT_TRUE(e.storage_failure()) << e.what();
  }
  EXPECT_EQ(q("SELECT attempts FROM exactly_queue WHERE message_id = 'm-1'"), 0);
  EXPECT_EQ(ep_.process_due(), 1u);
  EXPECT_EQ(q("SELECT count(*) FROM keys WHERE k = 'deadlock'"), 1);
  EXPECT_TRUE(ep_.errors().empty());
  EXPECT_EQ(runs_, 2);
}

}  // namespace
}  // namespace exactly::test
