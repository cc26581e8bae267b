#pragma once
// Ids PUT by handler attempts that have not committed yet, recorded apart from the handler's
// transaction so an entry survives its rollback and a crash of the process: on SQLite in a
// sidecar file beside the endpoint's database (whose write lock the handler's transaction holds
// while it PUTs), on PostgreSQL through a connection of its own in autocommit. An entry that
// outlives its attempt, because the process died before the handler's transaction ended, is
// turned into a DELETE by the endpoint. The journal only cleans up: exactly-once never depends
// on it (the server's staged TTL is the backstop), so it commits without waiting for the flush
// (SQLite synchronous=NORMAL, PostgreSQL synchronous_commit=off), which survives a killed client
// process but not a power cut.

#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::client {

struct journal_entry {
  std::string request_id;
  std::string url;
};

// The journal of one engine (sqlite_attempt_journal.cpp, pg_attempt_journal.cpp); the contracts
// are attempt_journal's.
class journal_engine {
 public:
  virtual ~journal_engine() = default;
  virtual void record(std::string_view endpoint, const std::vector<journal_entry>& entries,
                      std::int64_t now_ms) = 0;
  virtual void forget(const std::vector<journal_entry>& entries) = 0;
  virtual std::vector<journal_entry> older_than(std::string_view endpoint, std::int64_t cutoff_ms,
                                                int limit) = 0;
};

class attempt_journal {
 public:
  // Opens (creating) the SQLite journal at `path`; ":memory:" keeps it in memory.
  explicit attempt_journal(const std::string& path);
  // Connects (migrating exactly_attempts) to the PostgreSQL database of `opts` with a connection
  // of its own; `opts.synchronous_commit` is ignored (off).
  explicit attempt_journal(pg::options opts);
  // The journal of an endpoint on `db`: `configured` (a path on SQLite, a conninfo on
  // PostgreSQL), or when empty the default: "<db path>.attempts" on SQLite, the same database
  // as `db`'s connection on PostgreSQL.
  static attempt_journal of(const database& db, const std::string& configured);

  // Records that `endpoint` is about to PUT each entry's url; committed together before the call
  // returns.
  void record(std::string_view endpoint, const std::vector<journal_entry>& entries,
              std::int64_t now_ms) {
    if (!entries.empty())
      impl_->record(endpoint, entries, now_ms);
  }
  // Drops entries whose attempt has ended (committed, or handed to a DELETE).
  void forget(const std::vector<journal_entry>& entries) { impl_->forget(entries); }
  // `endpoint`'s entries recorded at or before `cutoff_ms`, oldest first.
  std::vector<journal_entry> older_than(std::string_view endpoint, std::int64_t cutoff_ms,
                                        int limit) {
    return impl_->older_than(endpoint, cutoff_ms, limit);
  }

 private:
  explicit attempt_journal(std::unique_ptr<journal_engine> impl) : impl_(std::move(impl)) {}
  std::unique_ptr<journal_engine> impl_;  // behind a pointer: the journal moves
};

// The SQLite journal at `path`.
std::unique_ptr<journal_engine> make_sqlite_journal(const std::string& path);
// The PostgreSQL journal through a connection of its own made with `opts`.
std::unique_ptr<journal_engine> make_pg_journal(pg::options opts);
// The options that connect to the same database as `db` (its conninfo as libpq reports it).
pg::options same_database(pg::connection& db);

// The journal of the database at `db_path`: "<db_path>.attempts", or ":memory:" for an
// in-memory database.
std::string attempt_journal_path(const std::string& db_path);

}  // namespace exactly::client
