// The benchmark's slow-disk VFS carries every fsync of a database and only those: a commit under
// synchronous=FULL goes through it, one under NORMAL in WAL mode does not, and the data reads back.

#include <echo_server.hpp>
#include <slow_sync_vfs.hpp>

#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

namespace exactly::test {
namespace {

TEST(slow_sync_vfs, carries_the_fsync_of_every_durable_commit) {
  bench::install_slow_sync_vfs(std::chrono::microseconds(1000));
  temp_dir dir;
  const std::string path = (dir.path() / "slow.db").string();
  {
    sqlite::connection full(path);
    full.exec("CREATE TABLE t (n INTEGER)");
    const std::uint64_t before = bench::slow_syncs();
    for (int i = 0; i < 5; ++i)
      full.prepare("INSERT INTO t VALUES (?)").bind(1, i).run();
    EXPECT_GE(bench::slow_syncs() - before, 5u);  // one WAL fsync per commit at least
  }
  {
    sqlite::connection normal(path, {.sync = sqlite::synchronous::normal});
    normal.exec("INSERT INTO t VALUES (5)");  // may restart the WAL, which syncs its header
    const std::uint64_t before = bench::slow_syncs();
    for (int i = 6; i < 11; ++i)
      normal.prepare("INSERT INTO t VALUES (?)").bind(1, i).run();
    EXPECT_EQ(bench::slow_syncs() - before, 0u);  // WAL + NORMAL: no fsync at commit
  }
  sqlite::connection reader(path);
  EXPECT_EQ(reader.query_int64("SELECT count(*) FROM t"), 11);
  EXPECT_THROW(bench::install_slow_sync_vfs(std::chrono::microseconds(0)), std::logic_error);

  // durability::unflushed: no fsync of its own under FULL; the next flushed commit syncs it with
  // itself, and the connection is back at FULL for it.
  sqlite::connection full(path);
  full.exec("INSERT INTO t VALUES (11)");  // may restart the WAL, which syncs its header
  std::uint64_t before = bench::slow_syncs();
  for (int i = 12; i < 16; ++i) {
    sqlite::transaction tx(full, sqlite::transaction::mode::immediate, durability::unflushed);
    full.prepare("INSERT INTO t VALUES (?)").bind(1, i).run();
    tx.commit();
  }
  EXPECT_EQ(bench::slow_syncs() - before, 0u);
  EXPECT_EQ(full.query_int64("PRAGMA synchronous"), 2);  // FULL again
  before = bench::slow_syncs();
  {
    sqlite::transaction tx(full);
    full.prepare("INSERT INTO t VALUES (16)").run();
    tx.commit();
  }
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  // A savepoint's durability changes nothing: the outer transaction's decides.
  before = bench::slow_syncs();
  {
    sqlite::transaction outer(full);
    {
      sqlite::transaction inner(full, sqlite::transaction::mode::immediate, durability::unflushed);
      full.prepare("INSERT INTO t VALUES (17)").run();
      inner.commit();
    }
    outer.commit();
  }
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  EXPECT_EQ(reader.query_int64("SELECT count(*) FROM t"), 18);
}

TEST(deferred_sync, a_transaction_leaves_the_connection_at_full_however_it_ends) {
  // An unflushed transaction runs at NORMAL; a flushed one at FULL, and so do autocommit
  // statements after any end.
  temp_dir dir;
  const std::string path = (dir.path() / "sync.db").string();
  sqlite::connection db(path);
  db.exec("CREATE TABLE t (n INTEGER)");
  constexpr auto immediate = sqlite::transaction::mode::immediate;
  {
    sqlite::transaction tx(db);
    EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);  // flushed: FULL inside
  }
  {
    sqlite::transaction tx(db, immediate, durability::unflushed);
    db.exec("INSERT INTO t VALUES (1)");
    EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 1);  // NORMAL inside
  }                                                      // rolled back
  EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);
  {
    sqlite::transaction outer(db, immediate, durability::unflushed);
    {
      sqlite::transaction inner(db);
      db.exec("INSERT INTO t VALUES (2)");
      inner.commit();  // a RELEASE: NORMAL until the outer one ends
      EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 1);
    }
  }  // the outer one rolled back, savepoint and all
  EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);
  {
    sqlite::transaction tx(db, immediate, durability::unflushed);
    db.exec("INSERT INTO t VALUES (3)");
    tx.commit();
  }
  EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);
  {
    sqlite::transaction tx(db);
    db.exec("INSERT INTO t VALUES (4)");
    tx.commit();
  }
  EXPECT_EQ(db.query_int64("PRAGMA synchronous"), 2);
  EXPECT_EQ(db.query_int64("SELECT sum(n) FROM t"), 7);  // 3 and 4 only
  sqlite::connection normal(path, {.sync = sqlite::synchronous::normal});
  {
    sqlite::transaction tx(normal);
    normal.exec("INSERT INTO t VALUES (5)");
  }
  EXPECT_EQ(normal.query_int64("PRAGMA synchronous"), 1);  // nothing deferred: as configured
}

}  // namespace
}  // namespace exactly::test
