/* A disk whose flush is slow, for a PostgreSQL server: LD_PRELOADed into it (pg_cluster's
 * restart_with_environment), every fsync and fdatasync takes EXACTLY_FSYNC_DELAY_US microseconds
 * longer, after the real one, as slow_sync_vfs.hpp does to SQLite's. C, so that the sanitizer
 * builds' C++ flags never reach it: it runs inside a server built without them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long delay_us(void) {
  static long cached = -1; /* a server process has one thread */
  if (cached < 0) {
    const char* value = getenv("EXACTLY_FSYNC_DELAY_US");
    cached = value ? atol(value) : 0;
    if (cached < 0)
      cached = 0;
  }
  return cached;
}

/* Waits the delay after a real call, keeping the errno it left. */
static int delayed(int result) {
  if (delay_us() == 0)
    return result;
  const int saved = errno;
  struct timespec left = {delay_us() / 1000000, (delay_us() % 1000000) * 1000};
  while (nanosleep(&left, &left) == -1 && errno == EINTR) {
  }
  errno = saved;
  return result;
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real)
    real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return delayed(real(fd));
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real)
    real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return delayed(real(fd));
}
