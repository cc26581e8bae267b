// The journal of ids PUT by handler attempts not yet committed, in a sidecar SQLite file.
#include "attempt_journal.hpp"

#include <exactly/common/migrations.hpp>
#include <exactly/common/sqlite.hpp>
#include <exactly/common/sqlite_wal_pages.hpp>

#include <optional>

namespace exactly::client {
namespace {

constexpr sqlite::migration schema[] = {
    {1,
     "CREATE TABLE exactly_attempts ("
     " request_id TEXT PRIMARY KEY,"
     " endpoint TEXT NOT NULL,"
     " url TEXT NOT NULL,"
     " created_ms INTEGER NOT NULL);"
     "CREATE INDEX exactly_attempts_age ON exactly_attempts(endpoint, created_ms);"},
};

// Its rows are only the attempts in flight: a WAL of 1000 pages, cut back to 4 MiB, is plenty
// (the defaults' 16 MiB would only take disk).
sqlite::options journal_options() {
  return sqlite::with_wal_pages({.sync = sqlite::synchronous::normal}, 1000);
}

class sqlite_journal final : public journal_engine {
 public:
  explicit sqlite_journal(const std::string& path) : db_(path, journal_options()) {
    sqlite::migrate(db_, "exactly.client.attempts", schema);
  }

  void record(std::string_view endpoint, const std::vector<journal_entry>& entries,
              std::int64_t now_ms) override {
    std::optional<sqlite::transaction> tx;  // one entry commits alone
    if (entries.size() > 1)
      tx.emplace(db_);
    for (const journal_entry& e : entries) {
      db_.prepare(
             "INSERT INTO exactly_attempts(request_id, endpoint, url, created_ms)"
             " VALUES(?, ?, ?, ?) ON CONFLICT DO NOTHING")
          .bind_all(e.request_id, endpoint, e.url, now_ms)
          .run();
    }
    if (tx)
      tx->commit();
  }

  void forget(const std::vector<journal_entry>& entries) override {
    if (entries.empty())
      return;
    sqlite::transaction tx(db_);
    for (const journal_entry& e : entries)
      db_.prepare("DELETE FROM exactly_attempts WHERE request_id = ?").bind(1, e.request_id).run();
    tx.commit();
  }

  std::vector<journal_entry> older_than(std::string_view endpoint, std::int64_t cutoff_ms,
                                        int limit) override {
    auto& q = db_.prepare(
        "SELECT request_id, url FROM exactly_attempts WHERE endpoint = ? AND created_ms <= ?"
        " ORDER BY created_ms LIMIT ?");
    q.bind_all(endpoint, cutoff_ms, limit);
    std::vector<journal_entry> out;
    while (q.step())
      out.push_back({q.text(0), q.text(1)});
    q.reset();
    return out;
  }

 private:
  sqlite::connection db_;
};

}  // namespace

std::unique_ptr<journal_engine> make_sqlite_journal(const std::string& path) {
  return std::make_unique<sqlite_journal>(path);
}

}  // namespace exactly::client
