#pragma once
// A client test's database, SQLite or PostgreSQL, so one test body runs on both engines: opened
// fresh, reopened as a restarted process would, SQL written once with ? placeholders, and a
// runtime built over it.

#include <exactly/client/runtime.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::test {

using endpoints = std::vector<std::unique_ptr<client::endpoint>>;
// Builds one runtime worker's endpoints on that worker's database.
using any_setup = std::function<endpoints(database)>;

class test_db {
 public:
  virtual ~test_db() = default;
  // The open connection.
  virtual database db() = 0;
  // Closes the connection and opens the same database again (a restarted process).
  virtual void reopen() = 0;
  // A runtime whose workers each open a connection of their own to this database.
  virtual std::unique_ptr<client::runtime> make_runtime(any_setup setup,
                                                        client::runtime_options opts) = 0;
  // A second, independent connection to the same database (another process's).
  virtual std::unique_ptr<test_db> another() = 0;
};

// Opens a fresh database of one engine.
using db_factory = std::unique_ptr<test_db> (*)();
// A fresh SQLite database in a temporary directory, removed at destruction.
std::unique_ptr<test_db> open_sqlite_db();

// `sql` with its ? placeholders numbered $1, $2, ... as PostgreSQL wants them.
std::string dollar_params(std::string_view sql);

// Runs `sql` (? placeholders) with `args` bound, on either engine.
template <class... A>
void run_sql(const database& db, std::string_view sql, const A&... args) {
  if (db.kind() == engine::sqlite)
    db.as_sqlite().prepare(sql).bind_all(args...).run();
  else
    db.as_postgres().query(dollar_params(sql), args...);
}

// Runs statements without parameters, on either engine.
void exec_sql(const database& db, std::string_view sql);

// The first column of the first row as an integer; -1 when there is none or it is NULL.
template <class... A>
std::int64_t query_int(const database& db, std::string_view sql, const A&... args) {
  if (db.kind() == engine::sqlite)
    return db.as_sqlite().query_int64(sql, args...).value_or(-1);
  return db.as_postgres().query_int64(dollar_params(sql), args...).value_or(-1);
}

}  // namespace exactly::test
