// Opening a SQLite file: processes that open a new file at the same moment, and a failed open.
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

namespace exactly::sqlite {
namespace {

class sqlite_open_test : public ::testing::Test {
 protected:
  sqlite_open_test()
      : dir_(std::filesystem::temp_directory_path() /
             ("exactly-sqlite-open-" + request_id::mint().to_string())) {
    std::filesystem::create_directories(dir_);
  }
  ~sqlite_open_test() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// The switch to WAL of a new file needs it alone; SQLite answers "database is locked" at once,
// without the busy handler, to the others. Several connections open each new file together and
// write to it: every one of them opens, and every write is there.
TEST_F(sqlite_open_test, connections_opening_a_new_file_together_all_open) {
  constexpr int files = 150;
  constexpr int openers = 3;
  std::atomic<int> failures{0};
  std::string first_failure;
  std::mutex first_failure_mutex;
  for (int f = 0; f < files; ++f) {
    const std::string path = (dir_ / ("f" + std::to_string(f) + ".db")).string();
    std::latch start(openers);
    std::atomic<int> wrote{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < openers; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        try {
          connection db(path);
          db.exec("CREATE TABLE IF NOT EXISTS t(v INTEGER)");
          db.exec("INSERT INTO t VALUES(1)");
          ++wrote;
        } catch (const std::exception& e) {
          if (failures++ == 0) {
            const std::lock_guard lock(first_failure_mutex);
            first_failure = e.what();
          }
        }
      });
    }
    for (std::thread& t : threads)
      t.join();
    connection db(path);
    auto& q = db.prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), wrote.load()) << path;
  }
  EXPECT_EQ(failures.load(), 0) << "first failure: " << first_failure;
}

// A file that is not a database fails to open with SQLite's error; the handle opened before the
// failure is closed (the sanitizer build reports it as a leak otherwise).
TEST_F(sqlite_open_test, a_file_that_is_not_a_database_is_refused_and_closed) {
  const std::string path = (dir_ / "not-a-database.db").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(4096, 'x');
  }
  try {
    connection db(path);
    FAIL() << "opened a file that is not a database";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("not a database"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace exactly::sqlite
