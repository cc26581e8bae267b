// WAL checkpoints on a thread of their own (sqlite::options::checkpoint_pages), with the counting
// VFS holding every fsync back: a connection that commits past the threshold goes on while the
// checkpoint waits for the disk, and the WAL still starts over under a steady stream of commits.
// Part of exactly_server_flush_tests (the VFS is the program's default).

#include <echo_server.hpp>
#include <slow_sync_vfs.hpp>

#include <exactly/common/sqlite.hpp>
#include <exactly/common/sqlite_wal_pages.hpp>

#include "common/src/wal_checkpointer.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <optional>

namespace exactly::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Frames in a WAL file that has not started over yet (32-byte header, 24 bytes per frame).
std::uintmax_t frames_in(const std::string& wal) {
  const std::uintmax_t size = fs::exists(wal) ? fs::file_size(wal) : 0;
  return size < 32 ? 0 : (size - 32) / (4096 + 24);
}

// Whether `now()` holds within 10 s.
template <class Predicate>
bool within_10s(Predicate now) {
  for (int i = 0; i < 200 && !now(); ++i)
    std::this_thread::sleep_for(50ms);
  return now();
}

// Whether one fsync waits at the gate within 10 s.
bool eventually_held() {
  return within_10s([] { return bench::held_syncs() == 1; });
}

// The thresholds these tests count in (the thread from 1000 pages, finished at 4000, the WAL cut
// back to 4 MiB), smaller than the defaults so that a WAL fills in a moment.
sqlite::options thresholds(sqlite::synchronous sync) {
  return sqlite::with_wal_pages({.sync = sync}, 1000);
}

struct gate {
  gate() { bench::hold_syncs(); }
  ~gate() { bench::release_syncs(); }
};

class wal_checkpoint_test : public ::testing::Test {
 protected:
  std::string path() const { return (dir_.path() / "c.db").string(); }
  std::string wal() const { return path() + "-wal"; }

  // One commit of a row: a page of its own.
  static void row(sqlite::connection& db) { db.exec("INSERT INTO t VALUES (zeroblob(3000))"); }
  // A table, and a first commit: the WAL exists and its header is synced.
  void create(sqlite::connection& db) {
    db.exec("CREATE TABLE t (b BLOB)");
    row(db);
  }
  // One commit per row until the WAL holds `frames` frames, or 20000 rows (a WAL that starts over
  // is cut back); the rows written.
  static int rows_until(sqlite::connection& db, const std::string& wal, std::uintmax_t frames) {
    int rows = 0;
    for (; frames_in(wal) < frames && rows < 20000; ++rows)
      row(db);
    return rows;
  }
  // rows_until() on a thread of its own.
  static std::future<int> write_until(sqlite::connection& db, const std::string& wal,
                                      std::uintmax_t frames) {
    return std::async(std::launch::async,
                      [&db, wal, frames] { return rows_until(db, wal, frames); });
  }
  // rows_until() here; whether the WAL got to `frames` frames.
  static bool fill_to(sqlite::connection& db, const std::string& wal, std::uintmax_t frames) {
    rows_until(db, wal, frames);
    return frames_in(wal) >= frames;
  }
  // Commits a row at a time until the WAL starts over (true) or `rows` rows are written; the
  // most frames the WAL held meanwhile go to `largest`.
  static bool start_over(sqlite::connection& db, const std::string& wal, int rows,
                         std::uintmax_t& largest) {
    largest = frames_in(wal);
    for (int i = 0; i < rows; ++i) {
      row(db);
      const std::uintmax_t now = frames_in(wal);
      if (now < largest)
        return true;
      largest = now;
    }
    return false;
  }

  temp_dir dir_;
};

TEST_F(wal_checkpoint_test, a_commit_past_the_threshold_goes_on_while_the_checkpoint_waits) {
  sqlite::connection db(path(), thresholds(sqlite::synchronous::normal));  // commits never sync
  create(db);
  std::future<int> writer;
  {
    const gate held;
    writer = write_until(db, wal(), 1200);  // past checkpoint_pages (1000), short of the finish
    ASSERT_EQ(writer.wait_for(20s), std::future_status::ready)
        << "a commit waited for the checkpoint's fsync";
    EXPECT_TRUE(eventually_held()) << "the checkpointer's fsync, held at the gate";
  }
  const int rows = writer.get();
  EXPECT_GT(rows, 300);  // a row a page, and a few pages a commit
  // Once the disk answers, the thread copies the WAL into the database: a page for each row.
  const auto copied = [&] { return fs::file_size(path()) >= (rows + 1) * 4096u; };
  EXPECT_TRUE(within_10s(copied)) << fs::file_size(path());
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), rows + 1);
}

// The control: SQLite's own checkpoint (checkpoint_pages = 0) holds up the commit that crosses
// its threshold until the disk answers, which is what the test above would see without the
// thread.
TEST_F(wal_checkpoint_test, without_the_thread_the_commit_that_crosses_the_threshold_waits) {
  sqlite::connection db(path(), {.sync = sqlite::synchronous::normal, .checkpoint_pages = 0});
  create(db);
  std::future<int> writer;
  {
    const gate held;
    writer = write_until(db, wal(), 1005);  // the commit past 1000 pages waits in its hook
    EXPECT_EQ(writer.wait_for(2s), std::future_status::timeout);
    EXPECT_TRUE(eventually_held());
  }
  EXPECT_GT(writer.get(), 300);
}

TEST_F(wal_checkpoint_test, the_wal_starts_over_under_a_steady_stream_of_commits) {
  const sqlite::options opts = thresholds(sqlite::synchronous::full);
  sqlite::connection db(path(), opts);
  create(db);
  int rows = 0;
  std::uintmax_t largest = 0;
  for (; rows < 3 * opts.finish_checkpoint_pages; ++rows) {  // at least a frame a commit
    row(db);
    largest = std::max(largest, frames_in(wal()));
  }
  // Never a WAL far past the finishing threshold: a writer that finds the thread copying goes on
  // (SQLITE_BUSY) and finishes after that copy, so the commits made meanwhile come on top (32
  // frames in one sanitizer run). Without the finishing step the WAL held 36,628 frames here.
  EXPECT_LE(largest, static_cast<std::uintmax_t>(opts.finish_checkpoint_pages) + 1000);
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), rows + 1);
}

// Under a steady stream of commits the thread's copy never reaches the WAL's end (commits go on
// meanwhile), but once it has copied all but a quarter of checkpoint_pages, the next commit copies
// the rest itself: the WAL starts over soon after checkpoint_pages, not at the finishing
// threshold (without that step it grew to 4000 frames here).
TEST_F(wal_checkpoint_test, the_wal_starts_over_once_the_thread_has_copied_nearly_all_of_it) {
  sqlite::options opts = thresholds(sqlite::synchronous::full);
  opts.wal_size_limit_bytes = 0;  // a WAL that starts over is cut back
  sqlite::connection db(path(), opts);
  create(db);
  std::uintmax_t largest = 0;
  EXPECT_TRUE(start_over(db, wal(), 20000, largest));
  EXPECT_LT(largest, 3000u);
}

// A reader holding the copy back at its snapshot: the thread's copy stops there, and the commit
// that finds all but a quarter of checkpoint_pages copied tries the rest once for this WAL, not at
// every commit after it (each try a checkpoint: its locks, and the fsyncs of what it copies).
TEST_F(wal_checkpoint_test, a_reader_holding_the_copy_back_costs_one_early_checkpoint_per_wal) {
  const sqlite::options opts = thresholds(sqlite::synchronous::normal);  // only checkpoints sync
  sqlite::connection db(path(), opts);
  sqlite::connection reader(path(), opts);
  create(db);
  ASSERT_TRUE(fill_to(db, wal(), 990));
  reader.exec("BEGIN");
  const std::int64_t rows = reader.query_int64("SELECT count(*) FROM t").value();  // a page a row
  const std::uint64_t before = bench::checkpoints_on_this_thread();
  const auto checkpointer = detail::wal_checkpointer::of(sqlite3_db_filename(db.native(), "main"));
  std::uint64_t rounds = 0;
  {
    const gate held;  // the thread's copy (to the snapshot) waits at its fsync while commits ask
    ASSERT_TRUE(fill_to(db, wal(), 1000));
    ASSERT_TRUE(eventually_held());
    rounds = checkpointer->rounds();  // the held round has not ended
    row(db);
    row(db);
  }
  // After the WAL's fsync the thread copies the pages of the reader's snapshot into the database
  // (no fsync of it: the copy stops short of the WAL's end), then notes the copy, which ends the
  // round.
  const auto copied = [&] {
    return fs::file_size(path()) >= static_cast<std::uintmax_t>(rows) * 4096;
  };
  for (int i = 0; i < 1000 && !(copied() && checkpointer->rounds() > rounds); ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(copied()) << fs::file_size(path());
  ASSERT_GT(checkpointer->rounds(), rounds) << "the round that copied did not end";
  // The commits from here to 1240 frames find all but a quarter of 1000 pages copied.
  ASSERT_TRUE(fill_to(db, wal(), opts.finish_checkpoint_pages - 100));
  EXPECT_EQ(bench::checkpoints_on_this_thread() - before, 1u);
  // Once the reader lets go, the WAL starts over.
  reader.exec("COMMIT");
  std::uintmax_t largest = 0;
  EXPECT_TRUE(start_over(db, wal(), 5000, largest));
}

// A checkpoint by a committing connection that still has a statement of its own open is refused
// (SQLITE_LOCKED): the statement's snapshot, not the disk, so later checkpoints still run and the
// WAL starts over once the statement ends.
TEST_F(wal_checkpoint_test, a_checkpoint_refused_for_the_committers_own_statement_is_tried_again) {
  const sqlite::options opts = thresholds(sqlite::synchronous::normal);  // only checkpoints sync
  sqlite::connection db(path(), opts);
  create(db);
  sqlite::statement open(db, "SELECT rowid FROM t");
  ASSERT_TRUE(open.step());  // a read of its own, held across the commits below
  const std::uint64_t before = bench::checkpoints_on_this_thread();
  // Past the finishing threshold: every commit from there tries to copy the WAL itself.
  ASSERT_TRUE(fill_to(db, wal(), opts.finish_checkpoint_pages + 100));
  EXPECT_EQ(bench::checkpoints_on_this_thread(), before);  // refused before the checkpoint lock
  open.reset();
  std::uintmax_t largest = 0;
  EXPECT_TRUE(start_over(db, wal(), 1000, largest))
      << "no checkpoint ran after the statement ended";
  EXPECT_GT(bench::checkpoints_on_this_thread(), before);
}

// A checkpoint whose fsync fails stops every later one in the process: the WAL keeps every
// frame, past the finishing threshold, rather than start over on a database file the disk may
// not hold.
TEST_F(wal_checkpoint_test, after_a_failed_checkpoint_the_wal_keeps_every_frame) {
  const sqlite::options opts = thresholds(sqlite::synchronous::normal);  // commits never sync
  std::optional<sqlite::connection> open(std::in_place, path(), opts);
  sqlite::connection& db = *open;
  create(db);
  bench::fail_syncs(true);
  struct healed {
    ~healed() { bench::fail_syncs(false); }
  } heal;
  const auto beyond = static_cast<std::uintmax_t>(opts.finish_checkpoint_pages) + 500;
  const int rows = write_until(db, wal(), beyond).get();
  EXPECT_GE(frames_in(wal()), beyond) << "the WAL started over after a failed checkpoint";
  bench::fail_syncs(false);
  const int more = write_until(db, wal(), beyond + 500).get();
  EXPECT_GE(frames_in(wal()), beyond + 500) << "a checkpoint ran again";
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), rows + more + 1);
  // Closing the file (the last connection, the checkpointer's, with it) checkpoints nothing
  // either, and the next opening recovers every row from the WAL.
  const std::uintmax_t kept = frames_in(wal());
  open.reset();
  EXPECT_EQ(frames_in(wal()), kept) << "the close checkpointed the WAL, or deleted it";
  sqlite::connection again(path(), opts);
  EXPECT_EQ(again.query_int64("SELECT count(*) FROM t"), rows + more + 1);
}

// A failed checkpoint stops the others from the moment it ends, not from when its thread notes
// the failure: a commit past the finishing threshold in between, while the failed checkpoint is
// held on its way out and the disk flushes again, starts none, so the WAL does not start over.
TEST_F(wal_checkpoint_test, no_checkpoint_starts_between_a_failed_one_and_its_note) {
  const sqlite::options opts = thresholds(sqlite::synchronous::normal);  // commits never sync
  sqlite::connection db(path(), opts);
  create(db);
  bench::fail_syncs(true);
  bench::hold_next_checkpoint_end();
  struct healed {
    ~healed() {
      bench::fail_syncs(false);
      bench::release_checkpoint_end();
    }
  } heal;
  // Past checkpoint_pages the thread checkpoints: its first fsync fails, and it stops as it ends.
  const int first = rows_until(db, wal(), static_cast<std::uintmax_t>(opts.checkpoint_pages) + 10);
  ASSERT_TRUE(within_10s(bench::checkpoint_end_held)) << "the thread's checkpoint did not end";
  bench::fail_syncs(false);  // a checkpoint started now would succeed, and the WAL start over
  const std::uint64_t before = bench::checkpoints_on_this_thread();
  const auto beyond = static_cast<std::uintmax_t>(opts.finish_checkpoint_pages) + 100;
  const int rows = rows_until(db, wal(), beyond);
  EXPECT_EQ(bench::checkpoints_on_this_thread(), before)
      << "a commit checkpointed before the failure was noted";
  EXPECT_GE(frames_in(wal()), beyond) << "the WAL started over";
  bench::release_checkpoint_end();  // once the failure is noted, still none
  const int more = rows_until(db, wal(), beyond + 200);
  EXPECT_EQ(bench::checkpoints_on_this_thread(), before);
  EXPECT_GE(frames_in(wal()), beyond + 200) << "the WAL started over";
  EXPECT_EQ(db.query_int64("SELECT count(*) FROM t"), first + rows + more + 1);
}

TEST_F(wal_checkpoint_test, thresholds_out_of_order_are_refused) {
  EXPECT_THROW(
      sqlite::connection(path(), {.checkpoint_pages = 1000, .finish_checkpoint_pages = 1000}),
      std::invalid_argument);
  EXPECT_THROW(sqlite::connection(path(), {.checkpoint_pages = -1}), std::invalid_argument);
}

}  // namespace
}  // namespace exactly::test
