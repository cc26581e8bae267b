// The libpq wrapper against a real PostgreSQL: parameters, bytes, transactions and savepoints,
// commit hooks, errors and their classes, reconnection after the server went away.
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>

#include "pg_cluster.hpp"

#include <libpq-fe.h>

#include <gtest/gtest.h>

#include <thread>

namespace exactly {
namespace {

class postgres_test : public ::testing::Test {
 protected:
  pg::connection db{{test::test_cluster().fresh_schema()}};
};

TEST_F(postgres_test, binds_text_integers_nulls_and_bytes) {
  db.exec("CREATE TABLE t (i BIGINT, s TEXT, b BYTEA)");
  const std::string raw("a\0b\xff", 4);
  db.query("INSERT INTO t VALUES ($1, $2, $3)", std::int64_t{1} << 40, "ünï", pg::bytes{raw});
  db.query("INSERT INTO t VALUES ($1, $2, $3)", 7, nullptr, nullptr);
  const pg::result r = db.query("SELECT i, s, b FROM t ORDER BY i DESC");
  ASSERT_EQ(r.rows(), 2);
  EXPECT_EQ(r.int64(0, 0), std::int64_t{1} << 40);
  EXPECT_EQ(r.text(0, 1), "ünï");
  EXPECT_EQ(r.text(0, 2), raw);
  EXPECT_TRUE(r.is_null(1, 1));
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t WHERE i = $1", 7), 1);
  EXPECT_EQ(db.query_int64("SELECT i FROM t WHERE i = $1", 8), std::nullopt);
  EXPECT_EQ(db.execute("UPDATE t SET s = $1", "x"), 2);
}

TEST_F(postgres_test, savepoints_roll_back_alone_and_hooks_wait_for_the_outer_commit) {
  db.exec("CREATE TABLE t (i BIGINT PRIMARY KEY)");
  int ran = 0;
  {
    pg::transaction outer(db);
    db.execute("INSERT INTO t VALUES (1)");
    {
      pg::transaction inner(db);
      db.execute("INSERT INTO t VALUES (2)");
      db.after_commit([&] { ran += 10; });
    }  // rolled back: its row and its hook are gone
    {
      pg::transaction inner(db);
      // A failed statement spoils only the savepoint.
      EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);
    }
    {
      pg::transaction inner(db);
      db.execute("INSERT INTO t VALUES (3)");
      db.after_commit([&] { ++ran; });
      inner.commit();
    }
    EXPECT_EQ(ran, 0);
    outer.commit();
  }
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(db.query_int64("SELECT sum(i) FROM t"), 4);
  EXPECT_FALSE(db.in_transaction());
}

// Tallies follow savepoints as hooks do, and what survives is recorded by the statement the
// function defers, in the outermost COMMIT, in the same transaction: a COMMIT that fails records
// nothing, and a transaction whose tallies sum to 0 sends no statement for them.
TEST_F(postgres_test, tallies_follow_savepoints_and_are_recorded_in_the_commit) {
  db.exec("CREATE TABLE totals (slot INTEGER PRIMARY KEY, n BIGINT NOT NULL)");
  db.exec("CREATE TABLE t (i BIGINT PRIMARY KEY)");
  int recorded = 0;
  db.on_commit_tallies([&](pg::connection& c, const pg::tally_totals& totals) {
    ++recorded;
    for (std::size_t slot = 0; slot < totals.size(); ++slot) {
      if (totals[slot] != 0) {
        c.defer(
            "INSERT INTO totals VALUES ($1, $2) ON CONFLICT (slot) DO UPDATE"
            " SET n = totals.n + excluded.n",
            static_cast<std::int64_t>(slot), totals[slot]);
      }
    }
  });
  const auto total = [&](int slot) {
    return db.query_int64("SELECT n FROM totals WHERE slot = $1", slot).value_or(0);
  };
  {
    pg::transaction outer(db);
    db.tally(1, 5);
    {
      pg::transaction inner(db);
      db.tally(1, 100);
      db.tally(2, 100);
    }  // rolled back: its tallies are gone
    {
      pg::transaction inner(db);
      db.tally(2, 7);
      db.tally(1, -2);
      inner.commit();
    }
    EXPECT_EQ(recorded, 0);
    outer.commit();
  }
  EXPECT_EQ(recorded, 1);
  EXPECT_EQ(total(1), 3);
  EXPECT_EQ(total(2), 7);
  {
    pg::transaction tx(db);
    db.tally(1, 4);
    db.tally(1, -4);
    tx.commit();
  }
  EXPECT_EQ(recorded, 1);  // every total 0: nothing to record
  {
    pg::transaction tx(db);
    db.execute("INSERT INTO t VALUES (1)");
    db.tally(1, 50);
  }  // rolled back
  {
    pg::transaction tx(db);  // tallies nothing: would record what the rollback left, if it had
    db.execute("INSERT INTO t VALUES (2)");
    tx.commit();
  }
  EXPECT_EQ(recorded, 1);
  {
    pg::transaction tx(db);
    db.tally(1, 1000);
    db.defer("INSERT INTO t VALUES (2)");  // fails at the COMMIT: nothing of it is recorded
    EXPECT_THROW(tx.commit(), pg::error);
  }
  {
    pg::transaction tx(db);  // tallies nothing: would record what the failed COMMIT left
    tx.commit();
  }
  EXPECT_EQ(recorded, 2);  // called for the failed COMMIT, its statement rolled back with it
  EXPECT_EQ(total(1), 3);
  EXPECT_EQ(total(2), 7);
  EXPECT_THROW(db.tally(2, 1), std::logic_error);  // no transaction open
  pg::transaction tx(db);
  EXPECT_THROW(db.tally(8, 1), std::out_of_range);
}

TEST_F(postgres_test, a_commit_after_a_failed_statement_throws_instead_of_looking_committed) {
  db.exec("CREATE TABLE t (i BIGINT PRIMARY KEY)");
  db.execute("INSERT INTO t VALUES (1)");
  bool hook = false;
  {
    pg::transaction tx(db);
    db.execute("INSERT INTO t VALUES (2)");
    db.after_commit([&] { hook = true; });
    try {
      db.execute("INSERT INTO t VALUES (1)");
      FAIL() << "a duplicate key was accepted";
    } catch (const pg::error& e) {
      EXPECT_TRUE(e.unique_violation());
      EXPECT_FALSE(e.storage_failure());  // the SQL's own fault: not worth a retry
    }
    EXPECT_THROW(tx.commit(), pg::error);
  }
  EXPECT_FALSE(hook);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 1);
}

// Raises an error with SQLSTATE `code` on `db`, as a deadlock or a refusal would.
void raise(pg::connection& db, const std::string& code) {
  db.exec("DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '" + code + "'; END $$");
}

// A statement refused because the transaction is aborted (25P02), after the caller caught the
// storage trouble that aborted it, reports that trouble; after a refusal it stays a refusal, and
// once a savepoint's rollback ended the aborted state the trouble is forgotten.
TEST_F(postgres_test, a_statement_after_caught_storage_trouble_reports_that_trouble) {
  const auto after_caught = [&](const std::string& code) {
    try {
      raise(db, code);
    } catch (const pg::error& e) {
      EXPECT_EQ(e.sqlstate(), code);
    }
    try {
      db.query_int64("SELECT 1");
      ADD_FAILURE() << "a statement ran in an aborted transaction";
      return std::string();
    } catch (const pg::error& e) {
      return e.sqlstate() + (e.storage_failure() ? " storage" : " refusal");
    }
  };
  {
    pg::transaction tx(db);
    EXPECT_EQ(after_caught("40P01"), "40P01 storage");  // a deadlock
  }
  {
    pg::transaction tx(db);
    EXPECT_EQ(after_caught("22012"), "25P02 refusal");  // a division by zero
  }
  {
    pg::transaction tx(db);
    {
      pg::transaction inner(db);
      try {
        raise(db, "40001");  // a serialization failure, rolled back with its savepoint
      } catch (const pg::error&) {
      }
    }
    EXPECT_EQ(after_caught("22012"), "25P02 refusal");
  }
  {
    pg_conn* const raw = db.native();  // taken before: using it later forgets nothing
    pg::transaction tx(db);
    {
      pg::transaction inner(db);
      try {
        raise(db, "40001");
      } catch (const pg::error&) {
      }
    }
    EXPECT_EQ(db.query_int64("SELECT 1"), 1);  // after the savepoint's rollback: not aborted
    // Aborted by a statement the connection did not see (libpq used directly): a refusal.
    PQclear(PQexec(raw, "SELECT 1 / 0"));
    try {
      db.query_int64("SELECT 1");
      ADD_FAILURE() << "a statement ran in an aborted transaction";
    } catch (const pg::error& e) {
      EXPECT_EQ(e.sqlstate(), "25P02") << e.what();
    }
  }
  {
    // libpq reached through native() after caught trouble may have run anything: the trouble is
    // forgotten, and what the transaction refuses then is a refusal.
    pg::transaction tx(db);
    try {
      raise(db, "40P01");
    } catch (const pg::error&) {
    }
    PQclear(PQexec(db.native(), "SELECT 1"));
    try {
      db.query_int64("SELECT 1");
      ADD_FAILURE() << "a statement ran in an aborted transaction";
    } catch (const pg::error& e) {
      EXPECT_EQ(e.sqlstate(), "25P02") << e.what();
    }
  }
  EXPECT_EQ(db.query_int64("SELECT 1"), 1);
}

TEST_F(postgres_test, an_unflushed_transaction_commits_and_leaves_the_session_synchronous) {
  db.exec("CREATE TABLE t (i BIGINT)");
  // A deferred trigger runs at COMMIT: it records the synchronous_commit that COMMIT ran with.
  db.exec(
      "CREATE TABLE seen (n SERIAL, setting TEXT);"
      "CREATE FUNCTION record_setting() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
      " INSERT INTO seen (setting) VALUES (current_setting('synchronous_commit')); RETURN NULL;"
      " END $$;"
      "CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED"
      " FOR EACH ROW EXECUTE FUNCTION record_setting()");
  pg::connection other{{test::test_cluster().fresh_schema()}};
  const std::string table = db.query("SELECT current_schema()").text(0, 0) + ".t";
  {
    pg::transaction tx(db, durability::unflushed);
    db.execute("INSERT INTO t VALUES (1)");
    tx.commit();
  }
  EXPECT_FALSE(db.in_transaction());
  EXPECT_EQ(other.query_int64("SELECT count(*) FROM " + table), 1);  // committed
  EXPECT_EQ(db.query("SHOW synchronous_commit").text(0, 0), "on");   // SET LOCAL: that one only
  // A savepoint's durability changes nothing: the outer transaction's decides.
  int hooks = 0;
  {
    pg::transaction outer(db);
    {
      pg::transaction inner(db, durability::unflushed);
      db.execute("INSERT INTO t VALUES (2)");
      db.after_commit([&] { ++hooks; });
      inner.commit();
    }
    EXPECT_TRUE(db.in_transaction());
    EXPECT_EQ(db.query("SHOW synchronous_commit").text(0, 0), "on");
  }  // rolled back
  EXPECT_EQ(hooks, 0);
  EXPECT_EQ(other.query_int64("SELECT count(*) FROM " + table), 1);
  {
    pg::transaction outer(db, durability::unflushed);
    {
      pg::transaction inner(db);
      db.execute("INSERT INTO t VALUES (3)");
      db.after_commit([&] { ++hooks; });
      inner.commit();
    }
    outer.commit();
  }
  EXPECT_EQ(hooks, 1);
  EXPECT_EQ(other.query_int64("SELECT sum(i) FROM " + table), 4);
  EXPECT_EQ(db.query("SHOW synchronous_commit").text(0, 0), "on");
  {
    pg::transaction tx(db);
    db.execute("INSERT INTO t VALUES (5)");
    tx.commit();
  }
  const pg::result seen = db.query("SELECT string_agg(setting, ',' ORDER BY n) FROM seen");
  EXPECT_EQ(seen.text(0, 0), "off,off,on");  // rows 1 and 3 unflushed, 5 flushed
}

TEST_F(postgres_test, the_database_handle_names_its_engine_and_refuses_the_other) {
  const database d(db);
  EXPECT_EQ(d.kind(), engine::postgres);
  EXPECT_EQ(&d.as_postgres(), &db);
  EXPECT_THROW(d.as_sqlite(), std::logic_error);
  db.exec("CREATE TABLE t (i BIGINT)");
  {
    database_transaction tx(d);
    EXPECT_TRUE(d.in_transaction());
    db.execute("INSERT INTO t VALUES (1)");
  }
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 0);
}

TEST(postgres_connect, a_bad_connection_string_is_a_clear_storage_error) {
  try {
    pg::connection bad({"host=127.0.0.1 port=1 connect_timeout=2"});
    FAIL() << "connected to nothing";
  } catch (const pg::error& e) {
    EXPECT_TRUE(e.storage_failure());
    EXPECT_NE(std::string(e.what()).find("cannot connect to PostgreSQL"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(pg::connection({"this is not a conninfo"}), pg::error);
}

TEST(postgres_connect, a_failing_session_setup_fails_the_connection_and_is_tried_again) {
  const std::string conninfo = test::test_cluster().fresh_schema();
  pg::connection admin({conninfo});
  admin.exec("CREATE TABLE setup_gate (open BOOLEAN)");  // empty: the setup divides by zero
  pg::options o{conninfo};
  o.session_setup =
      "SELECT set_config('exactly_test.setup', (1 / (SELECT count(*) FROM setup_gate))::TEXT,"
      " false)";
  EXPECT_THROW(pg::connection{o}, pg::error);  // under ASan: the half-made connection is freed
  admin.exec("INSERT INTO setup_gate VALUES (true)");
  pg::connection db(o);
  EXPECT_EQ(db.query_int64("SELECT current_setting('exactly_test.setup')::BIGINT"), 1);
  // Lost, then reconnected while the setup fails: no call runs on the half set-up session.
  admin.exec("DELETE FROM setup_gate");
  admin.query("SELECT pg_terminate_backend($1, 5000)", *db.query_int64("SELECT pg_backend_pid()"));
  EXPECT_THROW(db.query_int64("SELECT 1"), pg::error);  // the connection was lost
  EXPECT_THROW(db.query_int64("SELECT 1"), pg::error);  // reconnected; the setup failed
  EXPECT_THROW(db.query_int64("SELECT 1"), pg::error);  // reconnected again; failed again
  admin.exec("INSERT INTO setup_gate VALUES (true)");
  EXPECT_EQ(db.query_int64("SELECT current_setting('exactly_test.setup')::BIGINT"), 1);
}

TEST(postgres_outage, the_connection_comes_back_by_itself_after_the_server_returns) {
  test::pg_cluster own;  // stopped and started here: not the cluster other tests share
  pg::connection db(
      {own.conninfo(), true, std::chrono::milliseconds(10), std::chrono::milliseconds(50)});
  db.exec("CREATE TABLE t (i BIGINT)");
  own.stop(true);
  try {
    db.execute("INSERT INTO t VALUES (1)");
    FAIL() << "wrote to a stopped server";
  } catch (const pg::error& e) {
    EXPECT_TRUE(e.storage_failure()) << e.what();
  }
  EXPECT_FALSE(db.connected());
  EXPECT_THROW(db.execute("INSERT INTO t VALUES (1)"), pg::error);  // still down
  own.start();
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    try {
      db.execute("INSERT INTO t VALUES (2)");
      back = true;
    } catch (const pg::error&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_TRUE(back);
  EXPECT_TRUE(db.connected());
  EXPECT_EQ(db.query_int64("SELECT sum(i) FROM t"), 2);
}

}  // namespace
}  // namespace exactly
