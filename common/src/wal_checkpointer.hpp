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
#include <cstdint>
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

  // What a commit by `db` that left `frames` frames in the WAL does about them (checkpoint_hook):
  // below `pages` nothing (the WAL has started over); from `pages` it asks the thread for a
  // checkpoint, or copies the rest itself (what the thread has not copied yet) once the thread's
  // last copy left at most a quarter of `pages` of this WAL uncopied (once per WAL), and always
  // from `finish_pages`.
  void after_commit(sqlite3* db, const char* schema, int frames, int pages, int finish_pages);
  // How many rounds of the thread have ended, each a checkpoint and the note of what it copied:
  // for a test to wait for the note of a round it saw start.
  std::uint64_t rounds() const { return rounds_.load(); }

 private:
  void run();
  // A checkpoint (PASSIVE) by `db`, which sets `log_frames` and `copied`; false when none ran:
  // another one was under way, `db` has a statement open, or one has failed.
  bool checkpoint(sqlite3* db, const char* schema, int& log_frames, int& copied);
  // Notes the result `rc` of a checkpoint by `db`; on a failure, stops every later one. Whether
  // it ran.
  bool note(int rc, int log_frames, sqlite3* db);

  std::string file_;
  sqlite3* db_ = nullptr;
  std::atomic<bool> failed_{false};  // a checkpoint failed: none runs any more
  // Held across each checkpoint and its note(): none starts between a failure and its note.
  std::mutex checkpointing_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  // Under mutex_: the frames the thread's last checkpoint copied of the current WAL (-1: none
  // known), and whether a commit has already copied the rest itself; wal_noted_ tells whether
  // either is set, for the commits of a new WAL to find without the mutex.
  int copied_ = -1;
  bool finished_here_ = false;
  std::atomic<bool> wal_noted_{false};
  std::atomic<std::uint64_t> rounds_{0};
  std::thread thread_;
};

// What a connection installs in place of SQLite's automatic checkpoint: each commit tells the
// file's checkpointer (wal_checkpointer::after_commit), since under a steady stream of commits
// only a writer, between two of its own, can copy the WAL to its end and so let it start over.
// Needs 0 < pages < finish_pages (the connections of one file are meant to share them); throws
// what wal_checkpointer::of() throws.
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
