// A savepoint released later (pg::transaction::commit_later) against a real PostgreSQL: its
// RELEASE goes with the next round trip; when one of its statements fails there, it alone is
// rolled back (its tallies and after_commit hooks too), its owner is told once, and the
// statements behind it run; the rollback of its enclosing transaction takes it along without
// news. Round trips are counted in libpq's trace.
#include <exactly/common/postgres.hpp>

#include "pg_cluster.hpp"
#include "pg_round_trips.hpp"

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace exactly {
namespace {

class postgres_release_later_test : public ::testing::Test {
 protected:
  void SetUp() override {
    db.exec(
        "CREATE TABLE t (i BIGINT PRIMARY KEY); INSERT INTO t VALUES (1);"
        "CREATE TABLE counted (n BIGINT); INSERT INTO counted VALUES (0)");
    record_tallies();
  }
  // Tally slot 1 recorded into `counted` by each COMMIT.
  void record_tallies() {
    db.on_commit_tallies([](pg::connection& c, const pg::tally_totals& t) {
      c.defer("UPDATE counted SET n = n + $1", t[1]);
    });
  }

  template <class F>
  int round_trips(F fn) {
    return test::round_trips(db, fn);
  }
  // What the failures told to the owners were, by SQLSTATE.
  std::function<void(std::exception_ptr)> note_failure() {
    return [this](std::exception_ptr e) {
      try {
        std::rethrow_exception(e);
      } catch (const pg::error& err) {
        failures.push_back(std::string(err.sqlstate()));
      }
    };
  }
  // A request in the savepoint open now: a lookup (its SAVEPOINT sent), `value` inserted and
  // tallied.
  void request(std::int64_t value) {
    db.query("SELECT count(*) FROM t");
    db.defer("INSERT INTO t VALUES ($1)", value);
    db.tally(1, 1);
  }
  std::int64_t rows() { return *db.query_int64("SELECT count(*) FROM t"); }
  // Tally slot 1, as the committed transactions recorded it.
  std::int64_t recorded() { return *db.query_int64("SELECT n FROM counted"); }

  pg::connection db{{test::test_cluster().fresh_schema()}};
  std::vector<std::string> failures;
};

TEST_F(postgres_release_later_test, its_release_goes_with_the_next_round_trip) {
  pg::transaction group(db);
  pg::transaction a(db);
  request(2);
  EXPECT_EQ(round_trips([&] { a.commit_later(note_failure()); }), 0);
  pg::transaction b(db);
  EXPECT_EQ(round_trips([&] { request(3); }), 1);  // a's INSERT and RELEASE, b's SAVEPOINT
  EXPECT_EQ(db.transaction_depth(), 2);
  EXPECT_EQ(round_trips([&] { b.commit(); }), 1);
  pg::transaction c(db);
  request(4);
  c.commit_later(note_failure());
  EXPECT_EQ(round_trips([&] { group.commit(); }), 1);  // c's INSERT and RELEASE go with it
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(rows(), 4);
  EXPECT_EQ(recorded(), 3);
}

TEST_F(postgres_release_later_test, its_failure_rolls_it_back_alone_and_the_next_statements_run) {
  {
    pg::transaction group(db);
    db.defer("INSERT INTO t VALUES ($1)", 10);  // the group's own, before the requests
    {
      pg::transaction a(db);
      request(2);
      db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key: fails a
      a.commit_later(note_failure());
    }
    EXPECT_TRUE(failures.empty());  // not sent yet
    pg::transaction b(db);
    db.defer("INSERT INTO t VALUES ($1)", 3);
    db.tally(1, 1);
    // b's statement answers, after a's failure: as if a had never been.
    EXPECT_EQ(*db.query_int64("SELECT count(*) FROM t WHERE i IN (2, 3)"), 1);
    EXPECT_EQ(failures, std::vector<std::string>{"23505"});
    b.commit();
    group.commit();
  }
  EXPECT_EQ(failures.size(), 1u);
  EXPECT_EQ(rows(), 3);  // 1, 10 and 3
  EXPECT_EQ(*db.query_int64("SELECT count(*) FROM t WHERE i = 2"), 0);
  EXPECT_EQ(recorded(), 1);  // b's; a's taken back
}

// A request that swallowed its statement's failure cannot look committed: its RELEASE, sent
// later, fails, and that is its failure alone.
TEST_F(postgres_release_later_test, one_that_swallowed_a_failed_statement_fails_alone) {
  {
    pg::transaction group(db);
    {
      pg::transaction a(db);
      request(2);
      EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);  // swallowed
      a.commit_later(note_failure());
    }
    pg::transaction b(db);
    request(3);
    b.commit();
    group.commit();
  }
  EXPECT_EQ(failures, std::vector<std::string>{"25P02"});  // the aborted savepoint's RELEASE
  EXPECT_EQ(rows(), 2);                                    // 1 and 3
  EXPECT_EQ(recorded(), 1);
}

TEST_F(postgres_release_later_test, its_failure_at_the_commit_fails_it_alone_before_the_commit) {
  {
    pg::transaction group(db);
    {
      pg::transaction b(db);
      request(3);
      b.commit();
    }
    pg::transaction a(db);
    request(2);
    db.defer("INSERT INTO t VALUES ($1)", 1);
    a.commit_later(note_failure());
    EXPECT_EQ(round_trips([&] { EXPECT_NO_THROW(group.commit()); }), 2);  // sent again without a
  }
  EXPECT_EQ(failures, std::vector<std::string>{"23505"});
  EXPECT_EQ(rows(), 2);  // 1 and 3
  EXPECT_EQ(recorded(), 1);
  EXPECT_FALSE(db.in_transaction());
}

// On a connection that records no tallies, a failed one's are taken back all the same: nothing
// of them is left for the next transaction.
TEST_F(postgres_release_later_test, without_a_recorder_its_tallies_leave_nothing_behind) {
  db.on_commit_tallies({});
  {
    pg::transaction group(db);
    pg::transaction a(db);
    request(2);
    db.defer("INSERT INTO t VALUES ($1)", 1);
    a.commit_later(note_failure());
    group.commit();
  }
  EXPECT_EQ(failures, std::vector<std::string>{"23505"});
  record_tallies();
  pg::transaction tx(db);
  db.tally(1, 1);
  tx.commit();
  EXPECT_EQ(recorded(), 1);
}

TEST_F(postgres_release_later_test, a_rollback_of_its_enclosing_transaction_takes_it_along) {
  {
    pg::transaction group(db);
    pg::transaction a(db);
    request(2);
    db.defer("INSERT INTO t VALUES ($1)", 1);
    a.commit_later(note_failure());
  }  // the group rolls back, a's statements unsent
  EXPECT_TRUE(failures.empty());
  EXPECT_FALSE(db.in_transaction());
  {
    pg::transaction outer(db);
    pg::transaction group(db);  // a savepoint enclosing a
    db.query("SELECT 1");
    pg::transaction a(db);
    request(2);
    a.commit_later(note_failure());
  }  // the enclosing savepoint rolls back what a queued, then the outer transaction
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(rows(), 1);
  EXPECT_EQ(recorded(), 0);
}

TEST_F(postgres_release_later_test, its_after_commit_hooks_run_only_if_it_holds) {
  int held = 0, failed = 0;
  {
    pg::transaction group(db);
    {
      pg::transaction a(db);
      request(2);
      db.after_commit([&] { ++held; });
      a.commit_later(note_failure());
    }
    {
      pg::transaction b(db);
      request(3);
      db.defer("INSERT INTO t VALUES ($1)", 1);
      db.after_commit([&] { ++failed; });
      b.commit_later(note_failure());
    }
    EXPECT_EQ(held, 0);
    group.commit();
  }
  EXPECT_EQ(held, 1);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(failures, std::vector<std::string>{"23505"});
  EXPECT_EQ(rows(), 2);  // 1 and 2
}

// Found by the round trip of its enclosing savepoint's RELEASE: it fails alone, and the enclosing
// savepoint, with what it did after it, is released.
TEST_F(postgres_release_later_test, its_failure_at_an_enclosing_release_fails_it_alone) {
  int held = 0, failed = 0;
  {
    pg::transaction group(db);
    {
      pg::transaction outer(db);
      db.query("SELECT 1");  // outer's SAVEPOINT sent
      {
        pg::transaction a(db);
        request(2);
        db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key: fails a
        db.after_commit([&] { ++failed; });
        a.commit_later(note_failure());
      }
      db.defer("INSERT INTO t VALUES ($1)", 3);  // outer's, behind a's RELEASE
      db.tally(1, 1);
      db.after_commit([&] { ++held; });
      EXPECT_EQ(round_trips([&] { EXPECT_NO_THROW(outer.commit()); }), 2);
      EXPECT_EQ(failures, std::vector<std::string>{"23505"});
    }
    group.commit();
  }
  EXPECT_EQ(failures.size(), 1u);
  EXPECT_EQ(held, 1);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(rows(), 2);  // 1 and 3
  EXPECT_EQ(recorded(), 1);
}

// A statement prepared for the first time in its range keeps its name when the Parse ran ahead of
// the failure (prepared statements outlive a rollback), and is parsed again when it did not.
TEST_F(postgres_release_later_test, what_it_prepared_serves_the_statements_sent_again) {
  {
    pg::transaction group(db);
    {
      pg::transaction a(db);
      request(2);
      db.defer("INSERT INTO t VALUES ($1 + 100)", 1);  // parsed ahead of the failure
      db.defer("INSERT INTO t VALUES ($1)", 1);        // a duplicate key: fails a
      db.defer("INSERT INTO t VALUES ($1 + 200)", 1);  // its Parse never runs
      a.commit_later(note_failure());
    }
    pg::transaction b(db);
    db.defer("INSERT INTO t VALUES ($1 + 100)", 2);
    db.defer("INSERT INTO t VALUES ($1 + 200)", 2);
    b.commit();
    group.commit();
  }
  EXPECT_EQ(failures, std::vector<std::string>{"23505"});
  EXPECT_EQ(*db.query_int64("SELECT count(*) FROM t WHERE i IN (2, 101, 201)"), 0);
  EXPECT_EQ(*db.query_int64("SELECT count(*) FROM t WHERE i IN (102, 202)"), 2);
  // Both names are usable afterwards, outside any savepoint.
  db.execute("INSERT INTO t VALUES ($1 + 100)", 3);
  db.execute("INSERT INTO t VALUES ($1 + 200)", 3);
  EXPECT_EQ(rows(), 5);
}

TEST_F(postgres_release_later_test, one_whose_savepoint_is_not_sent_is_released_now) {
  pg::transaction group(db);
  {
    pg::transaction unsent(db);  // its SAVEPOINT still queued
    db.defer("INSERT INTO t VALUES ($1)", 3);
    EXPECT_EQ(round_trips([&] { unsent.commit_later(note_failure()); }), 1);
  }
  {
    pg::transaction failing(db);
    db.defer("INSERT INTO t VALUES ($1)", 1);
    EXPECT_THROW(failing.commit_later(note_failure()), pg::error);  // as commit()
  }
  group.commit();
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(rows(), 2);
}

TEST_F(postgres_release_later_test, the_outermost_transaction_commits_now) {
  pg::transaction tx(db);
  db.defer("INSERT INTO t VALUES ($1)", 2);
  EXPECT_EQ(round_trips([&] { tx.commit_later(note_failure()); }), 1);
  EXPECT_FALSE(db.in_transaction());
  EXPECT_EQ(rows(), 2);
}

}  // namespace
}  // namespace exactly
