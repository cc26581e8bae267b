#pragma once
// Checkpoints of a WAL database on a thread of their own (sqlite::options::checkpoint_pages): the
// copy of the WAL into the database, and its fsyncs, no longer hold up a connection that commits.
// One thread per database file in the process, shared by the file's connections.

#include <exactly/common/sqlite.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace exactly::detail {

// The thread and its own connection on the file.
class wal_checkpointer {
 public:
  // The checkpointer of the WAL database at `path`, started if none runs in this process; its
  // connection syncs as `sync` says. Throws sqlite::error if it cannot open the file.
  static std::shared_ptr<wal_checkpointer> of(const std::string& path, sqlite::synchronous sync);
  wal_checkpointer(const std::string& path, sqlite::synchronous sync);
  ~wal_checkpointer();
  wal_checkpointer(const wal_checkpointer&) = delete;
  wal_checkpointer& operator=(const wal_checkpointer&) = delete;

  // Asks for a checkpoint (PASSIVE) soon; asks made while one runs bring one more after it.
  void request();

 private:
  void run();

  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// What a connection installs in place of SQLite's automatic checkpoint: from `pages` pages in the
// WAL, each commit asks the file's checkpointer for a checkpoint; from `finish_pages`, the
// committing connection checkpoints itself instead (what the thread has not copied yet), since
// under a steady stream of commits only a writer, between two of its own, can copy the WAL to its
// end and so let it start over.
class checkpoint_hook {
 public:
  checkpoint_hook(sqlite3* db, const std::string& path, sqlite::synchronous sync, int pages,
                  int finish_pages);

 private:
  static int on_commit(void* self, sqlite3* db, const char* schema, int frames);

  std::shared_ptr<wal_checkpointer> checkpointer_;
  int pages_;
  int finish_pages_;
};

}  // namespace exactly::detail
