// The journal of ids PUT by handler attempts not yet committed: the engine and where it lives.
#include "attempt_journal.hpp"

#include <exactly/common/sqlite.hpp>

namespace exactly::client {

attempt_journal::attempt_journal(const std::string& path) : impl_(make_sqlite_journal(path)) {}

attempt_journal::attempt_journal(pg::options opts) : impl_(make_pg_journal(std::move(opts))) {}

attempt_journal attempt_journal::of(const database& db, const std::string& configured) {
  if (db.kind() == engine::sqlite) {
    return attempt_journal(make_sqlite_journal(
        configured.empty() ? attempt_journal_path(db.as_sqlite().path()) : configured));
  }
  pg::options opts = same_database(db.as_postgres());
  if (!configured.empty())
    opts.conninfo = configured;
  return attempt_journal(make_pg_journal(std::move(opts)));
}

std::string attempt_journal_path(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:")
    return ":memory:";
  return db_path + ".attempts";
}

}  // namespace exactly::client
