#pragma once
// A slow disk under a throwaway PostgreSQL cluster (slow_fsync_preload.c,
// EXACTLY_SLOW_FSYNC_PRELOAD): the server's environment that preloads it, whether the running
// server loaded it, and the WAL syncs PostgreSQL counted and timed (pg_stat_wal, with
// track_wal_io_timing on).

#include "bench_types.hpp"

#include <pg_cluster.hpp>

#include <exactly/common/postgres.hpp>

#include <fstream>
#include <iterator>
#include <string>

namespace exactly::bench {

// For pg_cluster::restart_with_environment: every fsync and fdatasync `delay_us` longer.
inline std::string slow_fsync_environment(long delay_us) {
  return std::string("LD_PRELOAD=") + EXACTLY_SLOW_FSYNC_PRELOAD +
         " EXACTLY_FSYNC_DELAY_US=" + std::to_string(delay_us);
}

// Whether `cluster`'s running server has the library mapped (the loader only warns when it
// cannot load one).
inline bool slow_fsync_loaded(const test::pg_cluster& cluster) {
  std::ifstream maps("/proc/" + std::to_string(cluster.server_pid()) + "/maps");
  const std::string mapped{std::istreambuf_iterator<char>(maps), {}};
  return mapped.find(EXACTLY_SLOW_FSYNC_PRELOAD) != std::string::npos;
}

// The WAL syncs since the last pg_stat_reset_shared('wal'), and the milliseconds they took.
inline wal_syncs read_wal_syncs(pg::connection& db) {
  const pg::result wal = db.query("SELECT wal_sync, wal_sync_time FROM pg_stat_wal");
  return {std::stol(wal.text(0, 0)), std::stod(wal.text(0, 1))};
}

}  // namespace exactly::bench
