// Deferred statements (pg::connection::defer, BEGIN, SAVEPOINT) against a real PostgreSQL: each
// goes out in the round trip of the next statement that waits for its answer (or of the COMMIT or
// RELEASE), runs before it, and reports its failure there; a rollback drops its own unsent. A
// savepoint of a failed transaction fails in its own commit. Statements run together
// (query_together) answer in one round trip. Round trips are counted in libpq's trace of the
// messages sent (a Sync or a simple Query each).
#include <exactly/common/postgres.hpp>

#include "pg_cluster.hpp"
#include "pg_round_trips.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace exactly {
namespace {

class postgres_deferred_test : public ::testing::Test {
 protected:
  void SetUp() override { db.exec("CREATE TABLE t (i BIGINT PRIMARY KEY)"); }

  // Round trips made by `fn`.
  template <class F>
  int round_trips(F fn) {
    return test::round_trips(db, fn);
  }

  pg::connection db{{test::test_cluster().fresh_schema()}};
};

TEST_F(postgres_deferred_test, savepoints_and_a_lock_go_out_with_the_next_statement) {
  // Two requests' savepoints in one transaction, as a commit group makes them.
  const auto group = [this](int first) {
    pg::transaction outer(db);
    for (int i = first; i < first + 2; ++i) {
      pg::transaction request(db);
      db.defer("SELECT pg_advisory_xact_lock($1)", i);
      db.execute("INSERT INTO t VALUES ($1)", i);
      request.commit();
    }
    outer.commit();
  };
  group(1);  // prepares the statements (each in the round trip of its first use)
  // BEGIN, SAVEPOINT, lock, INSERT; RELEASE; SAVEPOINT, lock, INSERT; RELEASE; COMMIT. Sent one at
  // a time, they were ten.
  EXPECT_EQ(round_trips([&] { group(3); }), 5);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 4);
  // An INSERT no one reads goes with the RELEASE: BEGIN, SAVEPOINT, lock, INSERT, RELEASE;
  // SAVEPOINT, lock, INSERT, RELEASE; COMMIT.
  const auto deferred_group = [this](int first) {
    pg::transaction outer(db);
    for (int i = first; i < first + 2; ++i) {
      pg::transaction request(db);
      db.defer("SELECT pg_advisory_xact_lock($1)", i);
      db.defer("INSERT INTO t VALUES ($1)", i);
      request.commit();
    }
    outer.commit();
  };
  EXPECT_EQ(round_trips([&] { deferred_group(5); }), 3);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 6);
  // An unflushed commit: its SET LOCAL goes with the COMMIT and what was deferred.
  EXPECT_EQ(round_trips([&] {
              pg::transaction tx(db, durability::unflushed);
              db.defer("INSERT INTO t VALUES ($1)", 7);
              tx.commit();
            }),
            1);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 7);
  // A transaction rolled back before anything went out sends nothing, not even its BEGIN.
  EXPECT_EQ(round_trips([&] {
              pg::transaction tx(db);
              db.defer("INSERT INTO t VALUES ($1)", 8);
            }),
            0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 7);
}

// A savepoint's rollback goes out with the next round trip, ahead of it: the next statement
// already sees the rolled-back work gone, and a failed one's transaction works again.
TEST_F(postgres_deferred_test, a_savepoints_rollback_goes_with_the_next_round_trip) {
  db.execute("INSERT INTO t VALUES (1)");
  pg::transaction group(db);
  std::optional<pg::transaction> read(std::in_place, db);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);
  EXPECT_EQ(round_trips([&] { read.reset(); }), 0);
  {
    pg::transaction failed(db);
    db.execute("INSERT INTO t VALUES (2)");
    EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);  // a duplicate key
  }
  // ROLLBACK TO and RELEASE (twice: the two savepoints above), SAVEPOINT and the count.
  EXPECT_EQ(round_trips([&] {
              pg::transaction next(db);
              EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);
              db.defer("INSERT INTO t VALUES ($1)", 3);
              next.commit();
            }),
            2);
  group.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);  // 1 and 3
}

// write(): at once outside a transaction; inside one, with the next round trip (here the COMMIT).
TEST_F(postgres_deferred_test, a_write_runs_at_once_outside_a_transaction_and_waits_inside) {
  db.write("INSERT INTO t VALUES ($1)", 1);  // prepares it, in a round trip of its own
  EXPECT_EQ(round_trips([&] { db.write("INSERT INTO t VALUES ($1)", 4); }), 1);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
  pg::transaction tx(db);
  EXPECT_EQ(round_trips([&] {
              db.write("INSERT INTO t VALUES ($1)", 2);
              db.write("INSERT INTO t VALUES ($1)", 3);
            }),
            0);
  EXPECT_EQ(round_trips([&] { tx.commit(); }), 1);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 4);
}

// Statements whose answers are all wanted go out in one round trip and run in order, each seeing
// what the ones before it did; the first failure is thrown and nothing after it runs.
TEST_F(postgres_deferred_test, statements_run_together_in_order_in_one_round_trip) {
  {
    pg::transaction tx(db);
    const auto insert = pg::bound("INSERT INTO t VALUES ($1) RETURNING i", 1);
    const auto count = pg::bound("SELECT count(*) FROM t");
    std::vector<pg::result> r;
    EXPECT_EQ(round_trips([&] { r = db.query_together({insert, count}); }), 1);  // with BEGIN
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].int64(0, 0), 1);
    EXPECT_EQ(r[1].int64(0, 0), 1);
    // The same statements again, now prepared: their answers, and a statement used twice.
    r = db.query_together({pg::bound("INSERT INTO t VALUES ($1) RETURNING i", 2), count, count});
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].int64(0, 0), 2);
    EXPECT_EQ(r[2].int64(0, 0), 2);
    tx.commit();
  }
  pg::transaction tx(db);
  try {
    db.query_together({pg::bound("INSERT INTO t VALUES ($1)", 3),
                       pg::bound("INSERT INTO t VALUES ($1)", 1),  // a duplicate key
                       pg::bound("INSERT INTO t VALUES ($1)", 4)});
    FAIL() << "the duplicate key was not reported";
  } catch (const pg::error& e) {
    EXPECT_TRUE(e.unique_violation()) << e.what();
  }
  EXPECT_THROW(tx.commit(), pg::error);  // PostgreSQL rolled it back
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
}

// A deferred statement that fails makes the RELEASE or COMMIT it goes with fail: the request
// cannot look committed, and its rollback undoes it alone.
TEST_F(postgres_deferred_test, a_deferred_failure_fails_the_release_or_commit_it_goes_with) {
  db.execute("INSERT INTO t VALUES (1)");
  {
    pg::transaction group(db);
    {
      pg::transaction request(db);
      db.defer("INSERT INTO t VALUES ($1)", 2);
      db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key
      EXPECT_THROW(request.commit(), pg::error);
    }
    db.defer("INSERT INTO t VALUES ($1)", 3);
    group.commit();
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);  // 1 and 3
  {
    pg::transaction tx(db);
    db.defer("INSERT INTO t VALUES ($1)", 4);
    db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key
    EXPECT_THROW(tx.commit(), pg::error);
  }
  EXPECT_FALSE(db.in_transaction());
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
}

TEST_F(postgres_deferred_test, a_deferred_statement_runs_before_the_next_one) {
  pg::transaction tx(db);
  db.defer("INSERT INTO t VALUES ($1)", 7);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = $1", 7), 1);
  tx.commit();
}

TEST_F(postgres_deferred_test, its_failure_is_the_next_statements_and_the_connection_goes_on) {
  db.execute("INSERT INTO t VALUES (1)");
  {
    pg::transaction tx(db);
    db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key
    try {
      db.query("SELECT count(*) FROM t");
      FAIL() << "the deferred statement's failure was not reported";
    } catch (const pg::error& e) {
      EXPECT_TRUE(e.unique_violation());
      EXPECT_NE(std::string(e.what()).find("INSERT INTO t"), std::string::npos) << e.what();
      EXPECT_TRUE(e.from_deferred_write());  // not the SELECT's own failure
    }
    EXPECT_THROW(tx.commit(), pg::error);  // PostgreSQL rolled it back
  }
  {  // the failure of the statement waited for is its own, deferred ones ahead of it passing
    pg::transaction tx(db);
    db.defer("INSERT INTO t VALUES ($1)", 3);
    try {
      db.execute("INSERT INTO t VALUES ($1)", 1);
      FAIL() << "the duplicate key was not reported";
    } catch (const pg::error& e) {
      EXPECT_TRUE(e.unique_violation());
      EXPECT_FALSE(e.from_deferred_write());
    }
  }
  // Out of pipeline mode, the connection serves as before.
  pg::transaction tx(db);
  db.execute("INSERT INTO t VALUES (2)");
  tx.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
}

TEST_F(postgres_deferred_test,
       a_commit_sends_the_deferred_statements_and_a_rollback_drops_its_own) {
  {
    pg::transaction tx(db);
    db.defer("INSERT INTO t VALUES ($1)", 1);
    tx.commit();
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = 1"), 1);
  {
    pg::transaction tx(db);
    pg::transaction request(db);
    db.defer("INSERT INTO t VALUES ($1)", 2);
    request.commit();
  }  // rolled back
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);
  {
    pg::transaction tx(db);
    db.defer("INSERT INTO t VALUES ($1)", 1);  // a duplicate key, never sent
  }
  EXPECT_FALSE(db.in_transaction());
  {
    pg::transaction tx(db);
    {
      pg::transaction unsent(db);
      db.defer("INSERT INTO t VALUES ($1)", 5);
    }  // its SAVEPOINT never went out: nothing is sent, the transaction goes on
    db.execute("INSERT INTO t VALUES (6)");
    tx.commit();
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = 5"), 0);
}

// A request that swallows its statement's failure cannot look committed: its savepoint's commit
// fails, its rollback undoes it alone, and the next request of the group commits.
TEST_F(postgres_deferred_test, a_savepoint_of_a_failed_transaction_fails_in_its_own_commit) {
  db.execute("INSERT INTO t VALUES (1)");
  pg::transaction group(db);
  {
    pg::transaction a(db);
    db.execute("INSERT INTO t VALUES (2)");
    EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);  // swallowed by the request
    EXPECT_THROW(a.commit(), pg::error);
  }
  {
    pg::transaction b(db);
    db.defer("SELECT pg_advisory_xact_lock($1)", 3);
    db.execute("INSERT INTO t VALUES (3)");
    b.commit();
  }
  group.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = 2"), 0);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = 3"), 1);
}

// An empty savepoint committed in a failed transaction, then the outer rollback: the ROLLBACK
// goes out alone, and the connection serves the next transaction.
TEST_F(postgres_deferred_test, a_rollback_after_a_failed_savepoint_leaves_the_connection_usable) {
  db.execute("INSERT INTO t VALUES (1)");
  {
    pg::transaction tx(db);
    EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);
    pg::transaction empty(db);
    EXPECT_THROW(empty.commit(), pg::error);
  }
  EXPECT_FALSE(db.in_transaction());
  pg::transaction tx(db);
  db.execute("INSERT INTO t VALUES (2)");
  tx.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 2);
}

TEST_F(postgres_deferred_test,
       a_round_trip_broken_off_fails_its_transaction_and_the_next_reconnects) {
  {
    pg::transaction tx(db);
    db.execute("INSERT INTO t VALUES (1)");
    db.defer("SELECT pg_terminate_backend(pg_backend_pid())");  // the server drops the session
    EXPECT_THROW(db.query("SELECT count(*) FROM t"), pg::error);
    EXPECT_THROW(db.execute("INSERT INTO t VALUES (2)"), pg::error);  // nothing more runs in it
    EXPECT_THROW(tx.commit(), pg::error);
  }  // the rollback reconnects, or the next transaction does
  pg::transaction tx(db);
  db.execute("INSERT INTO t VALUES (3)");
  tx.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);  // only the row of the new session
}

// What a request deferred after its SAVEPOINT went out is dropped with the savepoint's rollback,
// not sent later at the group's level.
TEST_F(postgres_deferred_test, a_rolled_back_savepoint_drops_what_it_deferred_after_its_start) {
  pg::transaction group(db);
  {
    pg::transaction request(db);
    db.execute("INSERT INTO t VALUES (1)");  // its SAVEPOINT goes out here
    db.defer("INSERT INTO t VALUES ($1)", 9);
  }  // rolled back
  group.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 0);
}

// A statement is prepared in the round trip of the deferred statements ahead of it; when its
// first execution fails, it stays prepared, and the next use runs.
TEST_F(postgres_deferred_test, a_statement_prepared_in_a_failed_round_trip_runs_next_time) {
  db.execute("INSERT INTO t VALUES (1)");
  const auto insert = [this](int i) {
    pg::transaction tx(db);
    db.defer("SELECT pg_advisory_xact_lock($1)", i);
    db.execute("INSERT INTO t VALUES ($1) /* prepared after a lock */", i);
    tx.commit();
  };
  EXPECT_THROW(insert(1), pg::error);  // a duplicate key, at its first execution
  insert(2);
  // A Parse that fails inside a request's savepoint spoils that savepoint only.
  pg::transaction group(db);
  {
    pg::transaction request(db);
    db.defer("SELECT pg_advisory_xact_lock($1)", 3);
    EXPECT_THROW(db.query("SELECT no_such_column FROM t"), pg::error);
  }
  db.execute("INSERT INTO t VALUES (4)");
  group.commit();
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 3);
}

TEST_F(postgres_deferred_test, defer_outside_a_transaction_is_refused) {
  EXPECT_THROW(db.defer("SELECT 1"), std::logic_error);
}

}  // namespace
}  // namespace exactly
