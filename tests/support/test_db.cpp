// Test databases of either engine: the SQLite one, and SQL helpers shared by both.
#include "test_db.hpp"

#include <exactly/common/request_id.hpp>

#include <filesystem>

namespace exactly::test {
namespace {

class sqlite_test_db final : public test_db {
 public:
  sqlite_test_db()
      : dir_(std::filesystem::temp_directory_path() /
             ("exactly-client-" + request_id::mint().to_string())),
        owner_(true) {
    std::filesystem::create_directories(dir_);
    reopen();
  }
  explicit sqlite_test_db(std::filesystem::path dir) : dir_(std::move(dir)), owner_(false) {
    reopen();
  }
  ~sqlite_test_db() override {
    db_.reset();
    if (owner_)
      std::filesystem::remove_all(dir_);
  }

  database db() override { return *db_; }
  void reopen() override {
    db_.reset();
    db_ = std::make_unique<sqlite::connection>(path());
  }
  std::unique_ptr<client::runtime> make_runtime(any_setup setup,
                                                client::runtime_options opts) override {
    return std::make_unique<client::runtime>(
        path(), sqlite::options{}, [setup](sqlite::connection& c) { return setup(c); }, opts);
  }
  std::unique_ptr<test_db> another() override { return std::make_unique<sqlite_test_db>(dir_); }

 private:
  std::string path() const { return (dir_ / "app.db").string(); }
  std::filesystem::path dir_;
  bool owner_;
  std::unique_ptr<sqlite::connection> db_;
};

}  // namespace

std::unique_ptr<test_db> open_sqlite_db() {
  return std::make_unique<sqlite_test_db>();
}

std::string dollar_params(std::string_view sql) {
  std::string out;
  int n = 0;
  for (const char c : sql) {
    if (c == '?')
      out += "$" + std::to_string(++n);
    else
      out += c;
  }
  return out;
}

void exec_sql(const database& db, std::string_view sql) {
  if (db.kind() == engine::sqlite)
    db.as_sqlite().exec(sql);
  else
    db.as_postgres().exec(sql);
}

}  // namespace exactly::test
