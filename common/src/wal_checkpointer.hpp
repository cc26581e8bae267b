#pragma once
// Checkpoints of a WAL database on a thread of their own (sqlite::options::checkpoint_pages): the
// copy of the WAL into the database, and its fsyncs, no longer hold up a connection that commits.
// One thread per database file in the process, shared by the file's connections. After a failed
// checkpoint no other one of the file runs while the process has it open, nor as it closes the
// file: the WAL keeps every frame, so no restart of the WAL overwrites the frame of a database page
// whose write the disk lost (a later fsync may succeed over pages the disk dropped). The next
// process to open the file recovers the WAL and checkpoints it anew.

#include <exactly/common/sqlite.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace exactly::detail {

// The thread and its own connection on the file.
class wal_checkpointer {
 public:
  // The checkpointer of the WAL database file `file` (an absolute path: sqlite3_db_filename),
  // started if none runs in this process. Throws sqlite::error if its connection cannot open the
  // file in WAL mode.
  static std::shared_ptr<wal_checkpointer> of(const std::string& file);
  explicit wal_checkpointer(const std::string& file);
  ~wal_checkpointer();
  wal_checkpointer(const wal_checkpointer&) = delete;
  wal_checkpointer& operator=(const wal_checkpointer&) = delete;

  // Asks for a checkpoint (PASSIVE) soon; asks made while one runs bring one more after it.
  void request();
  // A checkpoint by `db` (a writer on the file) of what the thread has not copied yet.
  void checkpoint_here(sqlite3* db, const char* schema);
  // Whether the thread's last checkpoint of the current WAL left at most `rest` of its `frames`
  // frames to copy.
  bool copied_all_but(int frames, int rest);
  // Tells that the WAL has started over: what the thread copied of the one before counts no more.
  void wal_started_over();
  // Whether a checkpoint failed: none runs any more.
  bool failed() const { return failed_; }

 private:
  void run();
  // The thread's checkpoint; notes what it copied of the WAL.
  void checkpoint_on_thread();
  // Notes the result `rc` of a checkpoint by `db`; on a failure, stops every later one.
  void note(int rc, int log_frames, sqlite3* db);

  std::string file_;
  sqlite3* db_ = nullptr;
  std::atomic<bool> failed_{false};
  // What the thread's last checkpoint found in the WAL and copied of it, in frames, and the count
  // of the WAL's starts over that it read before it began (under copied_mutex_).
  std::mutex copied_mutex_;
  int wal_starts_ = 0;
  int copied_log_ = 0;
  int copied_frames_ = 0;
  std::atomic<bool> copied_any_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

// What a connection installs in place of SQLite's automatic checkpoint: from `pages` pages in the
// WAL, each commit asks the file's checkpointer for a checkpoint; once the thread has copied all
// but a quarter of `pages` of the WAL, or from `finish_pages` in any case, the committing
// connection checkpoints itself instead (what the thread has not copied yet), since under a
// steady stream of commits only a writer, between two of its own, can copy the WAL to its end and
// so let it start over. Needs 0 < pages < finish_pages; throws what wal_checkpointer::of()
// throws.
class checkpoint_hook {
 public:
  checkpoint_hook(sqlite3* db, int pages, int finish_pages);

 private:
  static int on_commit(void* self, sqlite3* db, const char* schema, int frames);

  std::shared_ptr<wal_checkpointer> checkpointer_;
  int pages_;
  int finish_pages_;
};

// Throws std::invalid_argument unless `o`'s checkpoint_pages is 0, or above 0 and below its
// finish_checkpoint_pages.
void check_checkpoint_options(const sqlite::options& o);
// The hook for `db`, a connection in WAL mode, as `o` asks; nullptr when SQLite's own checkpoint
// stays (checkpoint_pages 0, or no checkpointer could open the file: logged as a warning).
std::unique_ptr<checkpoint_hook> install_checkpoints(sqlite3* db, const sqlite::options& o);

}  // namespace exactly::detail
