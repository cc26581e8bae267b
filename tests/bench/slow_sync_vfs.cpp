#include <slow_sync_vfs.hpp>

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace exactly::bench {
namespace {

sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs slow_vfs{};
std::chrono::microseconds sync_delay{0};
std::atomic<std::uint64_t> sync_count{0};
std::mutex gate_m;
std::condition_variable gate_cv;
bool gate_closed = false;
int gate_waiting = 0;
std::atomic<bool> failing{false};
// hold_next_checkpoint_end(), under gate_m: armed for the next end, one waiting, let go.
bool end_armed = false;
bool end_waiting = false;
bool end_released = false;
// Checkpoints this thread started: the exclusive WAL_CKPT_LOCK (slot 1 of the WAL index) granted.
thread_local std::uint64_t checkpoint_locks = 0;

// Our file: the io methods below, then the real VFS's file right behind it.
struct slow_file {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

sqlite3_file* real(sqlite3_file* f) {
  return reinterpret_cast<slow_file*>(f)->real();
}

int slow_sync(sqlite3_file* f, int flags) {
  {
    std::unique_lock l(gate_m);
    ++gate_waiting;
    gate_cv.wait(l, [] { return !gate_closed; });
    --gate_waiting;
  }
  if (failing.load())
    return SQLITE_IOERR_FSYNC;
  const int rc = real(f)->pMethods->xSync(real(f), flags);
  ++sync_count;
  std::this_thread::sleep_for(sync_delay);
  return rc;
}

const sqlite3_io_methods slow_methods = {
    3,
    [](sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); },
    [](sqlite3_file* f, void* p, int n, sqlite3_int64 o) {
      return real(f)->pMethods->xRead(real(f), p, n, o);
    },
    [](sqlite3_file* f, const void* p, int n, sqlite3_int64 o) {
      return real(f)->pMethods->xWrite(real(f), p, n, o);
    },
    [](sqlite3_file* f, sqlite3_int64 size) { return real(f)->pMethods->xTruncate(real(f), size); },
    slow_sync,
    [](sqlite3_file* f, sqlite3_int64* size) {
      return real(f)->pMethods->xFileSize(real(f), size);
    },
    [](sqlite3_file* f, int lock) { return real(f)->pMethods->xLock(real(f), lock); },
    [](sqlite3_file* f, int lock) { return real(f)->pMethods->xUnlock(real(f), lock); },
    [](sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); },
    [](sqlite3_file* f, int op, void* arg) {
      return real(f)->pMethods->xFileControl(real(f), op, arg);
    },
    [](sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); },
    [](sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); },
    [](sqlite3_file* f, int page, int size, int extend, void volatile** p) {
      return real(f)->pMethods->xShmMap(real(f), page, size, extend, p);
    },
    [](sqlite3_file* f, int offset, int n, int flags) {
      const int rc = real(f)->pMethods->xShmLock(real(f), offset, n, flags);
      if (rc == SQLITE_OK && offset == 1 && n == 1 &&
          flags == (SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE))
        ++checkpoint_locks;
      if (rc == SQLITE_OK && offset == 1 && n == 1 &&
          flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE)) {
        std::unique_lock l(gate_m);
        if (end_armed) {
          end_armed = false;
          end_waiting = true;
          gate_cv.wait(l, [] { return end_released; });
          end_waiting = false;
        }
      }
      return rc;
    },
    [](sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); },
    [](sqlite3_file* f, int remove) { return real(f)->pMethods->xShmUnmap(real(f), remove); },
    [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
      return real(f)->pMethods->xFetch(real(f), o, n, p);
    },
    [](sqlite3_file* f, sqlite3_int64 o, void* p) {
      return real(f)->pMethods->xUnfetch(real(f), o, p);
    },
};

int slow_open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
  f->pMethods = nullptr;
  const int rc = real_vfs->xOpen(real_vfs, name, real(f), flags, out_flags);
  if (rc == SQLITE_OK && real(f)->pMethods)
    f->pMethods = &slow_methods;
  return rc;
}

}  // namespace

void install_slow_sync_vfs(std::chrono::microseconds delay) {
  if (real_vfs)
    throw std::logic_error("the slow-sync VFS is installed already");
  real_vfs = sqlite3_vfs_find(nullptr);
  if (!real_vfs || real_vfs->iVersion < 2)
    throw std::runtime_error("no default SQLite VFS to wrap");
  sync_delay = delay;
  // Every call but xOpen goes to the real VFS, with the real VFS as its first argument.
  slow_vfs = sqlite3_vfs{};
  slow_vfs.iVersion = 2;
  slow_vfs.szOsFile = static_cast<int>(sizeof(slow_file)) + real_vfs->szOsFile;
  slow_vfs.mxPathname = real_vfs->mxPathname;
  slow_vfs.zName = "slow-sync";
  slow_vfs.xOpen = slow_open;
  slow_vfs.xDelete = [](sqlite3_vfs*, const char* n, int d) {
    return real_vfs->xDelete(real_vfs, n, d);
  };
  slow_vfs.xAccess = [](sqlite3_vfs*, const char* n, int flags, int* out) {
    return real_vfs->xAccess(real_vfs, n, flags, out);
  };
  slow_vfs.xFullPathname = [](sqlite3_vfs*, const char* n, int size, char* out) {
    return real_vfs->xFullPathname(real_vfs, n, size, out);
  };
  slow_vfs.xDlOpen = [](sqlite3_vfs*, const char* n) { return real_vfs->xDlOpen(real_vfs, n); };
  slow_vfs.xDlError = [](sqlite3_vfs*, int n, char* out) { real_vfs->xDlError(real_vfs, n, out); };
  slow_vfs.xDlSym = [](sqlite3_vfs*, void* h, const char* s) {
    return real_vfs->xDlSym(real_vfs, h, s);
  };
  slow_vfs.xDlClose = [](sqlite3_vfs*, void* h) { real_vfs->xDlClose(real_vfs, h); };
  slow_vfs.xRandomness = [](sqlite3_vfs*, int n, char* out) {
    return real_vfs->xRandomness(real_vfs, n, out);
  };
  slow_vfs.xSleep = [](sqlite3_vfs*, int us) { return real_vfs->xSleep(real_vfs, us); };
  slow_vfs.xCurrentTime = [](sqlite3_vfs*, double* t) {
    return real_vfs->xCurrentTime(real_vfs, t);
  };
  slow_vfs.xGetLastError = [](sqlite3_vfs*, int n, char* out) {
    return real_vfs->xGetLastError(real_vfs, n, out);
  };
  slow_vfs.xCurrentTimeInt64 = [](sqlite3_vfs*, sqlite3_int64* t) {
    return real_vfs->xCurrentTimeInt64(real_vfs, t);
  };
  if (sqlite3_vfs_register(&slow_vfs, 1) != SQLITE_OK)
    throw std::runtime_error("cannot register the slow-sync VFS");
}

std::uint64_t slow_syncs() {
  return sync_count.load();
}

void hold_syncs() {
  std::lock_guard l(gate_m);
  gate_closed = true;
}

void release_syncs() {
  {
    std::lock_guard l(gate_m);
    gate_closed = false;
  }
  gate_cv.notify_all();
}

void fail_syncs(bool fail) {
  failing.store(fail);
}

void hold_next_checkpoint_end() {
  std::lock_guard l(gate_m);
  end_armed = true;
  end_released = false;
}

void release_checkpoint_end() {
  {
    std::lock_guard l(gate_m);
    end_armed = false;
    end_released = true;
  }
  gate_cv.notify_all();
}

bool checkpoint_end_held() {
  std::lock_guard l(gate_m);
  return end_waiting;
}

std::uint64_t checkpoints_on_this_thread() {
  return checkpoint_locks;
}

int held_syncs() {
  std::lock_guard l(gate_m);
  return gate_waiting;
}

}  // namespace exactly::bench
