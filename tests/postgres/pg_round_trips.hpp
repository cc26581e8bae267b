#pragma once
// Round trips a piece of code makes on a PostgreSQL connection, counted in libpq's trace of the
// messages sent: a Sync (pipeline or extended protocol) or a simple Query each.

#include <exactly/common/postgres.hpp>

#include <libpq-fe.h>

#include <cstdio>
#include <string_view>

namespace exactly::test {

// Round trips `fn` makes on `db`.
template <class F>
int round_trips(pg::connection& db, F fn) {
  std::FILE* f = std::tmpfile();
  PQtrace(db.native(), f);
  PQsetTraceFlags(db.native(), PQTRACE_SUPPRESS_TIMESTAMPS);
  fn();
  PQuntrace(db.native());
  std::rewind(f);
  int n = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    const std::string_view l(line);
    if (l.starts_with("F\t") && (l.find("\tSync") != l.npos || l.find("\tQuery") != l.npos))
      ++n;
  }
  std::fclose(f);
  return n;
}

}  // namespace exactly::test
