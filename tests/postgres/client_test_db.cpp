// The PostgreSQL test database of the client tests: a fresh schema in the test cluster.
#include "client_test_db.hpp"

#include "pg_cluster.hpp"

namespace exactly::test {
namespace {

class pg_test_db final : public test_db {
 public:
  explicit pg_test_db(std::string conninfo) : conninfo_(std::move(conninfo)) { reopen(); }

  database db() override { return *db_; }
  void reopen() override {
    db_.reset();
    db_ = std::make_unique<pg::connection>(pg::options{conninfo_});
  }
  std::unique_ptr<client::runtime> make_runtime(any_setup setup,
                                                client::runtime_options opts) override {
    return std::make_unique<client::runtime>(
        pg::options{conninfo_}, [setup](pg::connection& c) { return setup(c); }, opts);
  }
  std::unique_ptr<test_db> another() override { return std::make_unique<pg_test_db>(conninfo_); }

 private:
  std::string conninfo_;
  std::unique_ptr<pg::connection> db_;
};

}  // namespace

std::unique_ptr<test_db> open_pg_db() {
  return std::make_unique<pg_test_db>(test_cluster().fresh_schema());
}

std::unique_ptr<test_db> open_pg_db(const std::string& conninfo) {
  return std::make_unique<pg_test_db>(conninfo);
}

}  // namespace exactly::test
