// The slow-disk library for PostgreSQL (slow_fsync_preload.c) carries every WAL sync of a server
// started with it: PostgreSQL's own count and timing of its WAL syncs (pg_stat_wal) show each one
// taking at least the delay, and what was committed reads back.

#include <pg_cluster.hpp>
#include "slow_fsync.hpp"

#include <exactly/common/postgres.hpp>

#include <gtest/gtest.h>

#include <string>

namespace exactly::test {
namespace {

TEST(slow_fsync_preload, every_wal_sync_of_the_server_takes_the_delay_longer) {
  constexpr int delay_ms = 20;
  pg_cluster cluster;  // its own: the tests' shared cluster keeps its fast disk
  cluster.restart_with_environment(bench::slow_fsync_environment(delay_ms * 1000));
  pg::connection db({.conninfo = cluster.conninfo()});
  db.exec("ALTER SYSTEM SET track_wal_io_timing = on");
  db.query("SELECT pg_reload_conf()");
  db.query("SELECT pg_sleep(0.2)");  // the postmaster's children read the file again
  db.exec("CREATE TABLE t (n INTEGER)");
  db.query("SELECT pg_stat_force_next_flush()");  // a backend reports its counts when idle
  db.query("SELECT pg_stat_reset_shared('wal')");
  for (int i = 0; i < 5; ++i)
    db.query("INSERT INTO t VALUES ($1)", i);  // each one a commit waiting for its WAL sync
  db.query("SELECT pg_stat_force_next_flush()");
  const auto [syncs, sync_ms] = bench::read_wal_syncs(db);
  EXPECT_GE(syncs, 5);
  EXPECT_GE(sync_ms, 0.99 * delay_ms * static_cast<double>(syncs))
      << syncs << " syncs took " << sync_ms << " ms in all";
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), 5);
  // What the shell would read as more than words is refused, and the cluster left as it was.
  EXPECT_THROW(cluster.restart_with_environment("A='b'"), std::invalid_argument);
  EXPECT_THROW(cluster.restart_with_environment("A=$(touch x)"), std::invalid_argument);
  EXPECT_THROW(cluster.restart_with_environment("A=b;c"), std::invalid_argument);
  // The environment stays with the cluster across a later start.
  cluster.stop(false);
  cluster.start();
  pg::connection again({.conninfo = cluster.conninfo()});
  again.query("SELECT pg_stat_reset_shared('wal')");
  again.query("INSERT INTO t VALUES (5)");
  again.query("SELECT pg_stat_force_next_flush()");
  const bench::wal_syncs after = bench::read_wal_syncs(again);
  EXPECT_GE(after.syncs, 1);
  EXPECT_GE(after.ms, 0.99 * delay_ms * static_cast<double>(after.syncs));
}

}  // namespace
}  // namespace exactly::test
