#pragma once
// Rows of one SQL query on either engine, for reads written once with ? placeholders (the
// operator's views in inspect.cpp): each row is handed to a callback while it is current.

#include <exactly/common/database.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace exactly::client {

// The current row of a query, columns 0-based.
class sql_row {
 public:
  virtual ~sql_row() = default;
  virtual bool is_null(int col) const = 0;
  virtual std::int64_t int64(int col) const = 0;
  virtual std::string text(int col) const = 0;
};

namespace detail {

class sqlite_row final : public sql_row {
 public:
  explicit sqlite_row(sqlite::statement& q) : q_(q) {}
  bool is_null(int col) const override { return q_.is_null(col); }
  std::int64_t int64(int col) const override { return q_.int64(col); }
  std::string text(int col) const override { return q_.text(col); }

 private:
  sqlite::statement& q_;
};

class pg_row final : public sql_row {
 public:
  pg_row(const pg::result& r, int row) : r_(r), row_(row) {}
  bool is_null(int col) const override { return r_.is_null(row_, col); }
  std::int64_t int64(int col) const override { return r_.int64(row_, col); }
  std::string text(int col) const override { return r_.text(row_, col); }

 private:
  const pg::result& r_;
  int row_;
};

}  // namespace detail

// Runs `sql` (? placeholders, SQL both engines accept) with `args` bound and calls `fn` with
// each row in order. Throws the engine's storage_error.
template <class F, class... A>
void for_each_row(const database& db, std::string_view sql, F&& fn, const A&... args) {
  if (db.kind() == engine::sqlite) {
    auto& q = db.as_sqlite().prepare(sql);
    q.bind_all(args...);
    try {
      while (q.step())
        fn(static_cast<const sql_row&>(detail::sqlite_row(q)));
    } catch (...) {
      q.reset();
      throw;
    }
    q.reset();
    return;
  }
  const pg::result r = db.as_postgres().query(numbered_placeholders(sql), args...);
  for (int i = 0; i < r.rows(); ++i)
    fn(static_cast<const sql_row&>(detail::pg_row(r, i)));
}

}  // namespace exactly::client
