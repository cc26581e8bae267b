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

  // commit_unflushed(): no fsync of its own under FULL; the next FULL commit syncs it with itself,
  // and the connection is back at FULL for it.
  sqlite::connection full(path);
  full.exec("INSERT INTO t VALUES (11)");  // may restart the WAL, which syncs its header
  std::uint64_t before = bench::slow_syncs();
  for (int i = 12; i < 16; ++i) {
    sqlite::transaction tx(full);
    full.prepare("INSERT INTO t VALUES (?)").bind(1, i).run();
    tx.commit_unflushed();
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
  // A savepoint's commit_unflushed() is a RELEASE: the outer commit decides.
  before = bench::slow_syncs();
  {
    sqlite::transaction outer(full);
    {
      sqlite::transaction inner(full);
      full.prepare("INSERT INTO t VALUES (17)").run();
      inner.commit_unflushed();
    }
    outer.commit();
  }
  EXPECT_GE(bench::slow_syncs() - before, 1u);
  EXPECT_EQ(reader.query_int64("SELECT count(*) FROM t"), 18);
}

}  // namespace
}  // namespace exactly::test
