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
}

}  // namespace
}  // namespace exactly::test
