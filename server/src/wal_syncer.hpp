#pragma once
// Syncing SQLite's WAL in the background: a commit a flush is required for is committed without
// waiting for the disk (synchronous=NORMAL: its WAL frames written, visible to every later read),
// and a thread of its own syncs the WAL file, one fsync covering every commit that returned before
// it began. What waits on a commit (its answers, a read that may have seen it) is released on the
// storage thread once such a sync has ended. The storage thread meanwhile goes on committing.
// It relies on the VFS's xSync of the WAL file being safe beside the connection's own calls on
// that file (SQLite's unix VFS only fsyncs the descriptor once the first sync has synced the
// directory too), and syncs as PRAGMA synchronous=FULL would without PRAGMA fullfsync.

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_file;

namespace exactly::server {

class wal_syncer {
 public:
  // `db`: the storage thread's connection, in WAL mode. Its WAL file is taken at the first commit.
  wal_syncer(boost::asio::io_context& storage, sqlite3* db);
  // Ends the thread once the syncs asked for so far are done.
  ~wal_syncer();
  wal_syncer(const wal_syncer&) = delete;
  wal_syncer& operator=(const wal_syncer&) = delete;

  // Storage thread, before a COMMIT whose waiters need the disk: its number. From now on a read
  // may see that commit, so visible() counts it. `posted`: the keys (route and id) of the POSTs
  // it holds, which a GET of them waits for (posted_in).
  std::uint64_t begin_commit(std::vector<std::string> posted = {});
  // Storage thread, once that COMMIT returned (succeeded or not): `then(synced)` runs on the
  // storage thread after a sync that began after this call (synced = false: it failed).
  void committed(std::uint64_t seq, std::function<void(bool)> then);
  // Storage thread: `then(synced)` runs once every commit up to `seq` is synced, at once if it is.
  void when_synced(std::uint64_t seq, std::function<void(bool)> then);

  // Any thread: the number of the latest commit a read may see now.
  std::uint64_t visible() const { return visible_.load(); }
  // Any thread: the number of the latest commit not yet synced that holds a POST of `key`, 0 if
  // none: a GET of that id waits for it (an execution is only ever written by a POST of its id).
  std::uint64_t posted_in(const std::string& key) const;
  // Any thread: every commit up to this number is on disk.
  std::uint64_t synced() const { return synced_.load(); }
  // Syncs run in the background so far (for tests and metrics).
  std::uint64_t syncs() const { return syncs_.load(); }

 private:
  // The WAL file of the storage connection, taken on the storage thread after a commit.
  sqlite3_file* wal_file();
  // One fsync of the WAL file; false if it failed.
  bool sync_once(sqlite3_file* f);
  void run();
  // Storage thread: runs the waiters the syncs so far have released.
  void release();

  boost::asio::io_context& io_;
  sqlite3* db_;
  std::atomic<sqlite3_file*> wal_{nullptr};
  std::atomic<std::uint64_t> visible_{0};
  std::atomic<std::uint64_t> synced_{0};
  std::atomic<std::uint64_t> syncs_{0};
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;     // storage thread: the last number given
  std::uint64_t written_ = 0;  // under m_: every commit up to it has returned
  bool failed_ = false;        // under m_: a sync failed; nothing is released as synced again
  bool stop_ = false;          // under m_
  std::multimap<std::uint64_t, std::function<void(bool)>> waiters_;  // storage thread
  std::unordered_map<std::string, std::uint64_t> posted_;            // under m_: key -> commit
  std::thread thread_;
};

}  // namespace exactly::server
