#pragma once
// Ids PUT by handler attempts that have not committed yet, kept in a sidecar SQLite file beside the
// endpoint's database (the handler's own transaction holds that database's write lock while it
// PUTs). An entry that outlives its attempt, because the process died before the handler's
// transaction ended, is turned into a DELETE by the endpoint. The journal only cleans up:
// exactly-once never depends on it (the server's staged TTL is the backstop), so it commits with
// synchronous=NORMAL, which survives a killed process but not a power cut.

#include <exactly/common/sqlite.hpp>

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

class attempt_journal {
 public:
  // Opens (creating) the journal at `path`; ":memory:" keeps it in memory.
  explicit attempt_journal(const std::string& path);

  // Records that `endpoint` is about to PUT `url`; committed before the call returns.
  void record(std::string_view endpoint, const journal_entry& e, std::int64_t now_ms);
  // Drops entries whose attempt has ended (committed, or handed to a DELETE).
  void forget(const std::vector<journal_entry>& entries);
  // `endpoint`'s entries recorded at or before `cutoff_ms`, oldest first.
  std::vector<journal_entry> older_than(std::string_view endpoint, std::int64_t cutoff_ms,
                                        int limit);

 private:
  std::unique_ptr<sqlite::connection> db_;  // behind a pointer: the journal moves
};

// The journal of the database at `db_path`: "<db_path>.attempts", or ":memory:" for an
// in-memory database.
std::string attempt_journal_path(const std::string& db_path);

}  // namespace exactly::client
