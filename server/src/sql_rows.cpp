// The server inspection's row reader (sql_rows.hpp).
#include "sql_rows.hpp"

#include <stdexcept>

namespace exactly::server::inspect::detail {

// Found by argument-dependent lookup from pg::connection::query.
pg::param to_param(const sql_arg& a) {
  return a.is_text ? pg::to_param(a.text) : pg::to_param(a.number);
}

std::vector<row> query_rows(const database& db, std::string_view sql, int columns,
                            const std::vector<sql_arg>& args) {
  std::vector<row> out;
  if (db.kind() == engine::sqlite) {
    auto& q = db.as_sqlite().prepare(sql);
    int i = 0;
    for (const sql_arg& a : args) {
      if (a.is_text)
        q.bind(++i, std::string_view(a.text));
      else
        q.bind(++i, a.number);
    }
    try {
      while (q.step()) {
        row r;
        for (int c = 0; c < columns; ++c)
          r.push_back(q.is_null(c) ? cell{} : cell{q.text(c)});
        out.push_back(std::move(r));
      }
    } catch (...) {
      q.reset();
      throw;
    }
    q.reset();
    return out;
  }
  auto& pg = db.as_postgres();
  const std::string text = numbered_placeholders(sql);
  const auto run = [&]() -> pg::result {
    switch (args.size()) {
      case 0:
        return pg.query(text);
      case 1:
        return pg.query(text, args[0]);
      case 2:
        return pg.query(text, args[0], args[1]);
      case 3:
        return pg.query(text, args[0], args[1], args[2]);
      case 4:
        return pg.query(text, args[0], args[1], args[2], args[3]);
      case 5:
        return pg.query(text, args[0], args[1], args[2], args[3], args[4]);
      default:
        throw std::logic_error("inspect: too many query parameters");
    }
  };
  const pg::result q = run();
  for (int i = 0; i < q.rows(); ++i) {
    row r;
    for (int c = 0; c < columns; ++c)
      r.push_back(q.is_null(i, c) ? cell{} : cell{q.text(i, c)});
    out.push_back(std::move(r));
  }
  return out;
}

std::int64_t as_int(const cell& c) {
  return c ? std::stoll(*c) : 0;
}

}  // namespace exactly::server::inspect::detail
