#pragma once
// A disk whose flush is slow, for benchmarks: a SQLite VFS that wraps the default one, sleeps
// `delay` after every real xSync, and becomes this process's default VFS. Cloud block storage
// often takes 1 to 10 ms per flush, where this VM's disk takes a fraction of one.

#include <chrono>
#include <cstdint>

namespace exactly::bench {

// Registers the VFS as the default; call before opening any database. Installing twice throws.
void install_slow_sync_vfs(std::chrono::microseconds delay);
// How many xSync calls went through the VFS since it was installed.
std::uint64_t slow_syncs();
// While held, every xSync waits (before the real one) until release_syncs(): a disk whose flush
// has not ended, for tests of what waits for it. held_syncs() counts the xSyncs waiting now.
void hold_syncs();
void release_syncs();
int held_syncs();
// How many checkpoints the calling thread has started on a WAL database through the VFS (the
// checkpoint lock taken: each one, whether it copied anything or not).
std::uint64_t checkpoints_on_this_thread();
// While set, every xSync fails with SQLITE_IOERR_FSYNC (a disk that cannot flush).
void fail_syncs(bool fail);
// The next thread to end a checkpoint (to release the WAL_CKPT_LOCK, once SQLite let go of it and
// before the checkpoint call returns) waits there until release_checkpoint_end(): the moment
// between a checkpoint and what its caller does with its result. checkpoint_end_held(): whether
// one waits now.
void hold_next_checkpoint_end();
void release_checkpoint_end();
bool checkpoint_end_held();

}  // namespace exactly::bench
