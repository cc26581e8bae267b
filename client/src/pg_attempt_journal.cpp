// The journal of ids PUT by handler attempts not yet committed, in PostgreSQL through a
// connection of its own: each entry commits at once, whatever the handler's transaction does.
#include "attempt_journal.hpp"
#include "pg_text_array.hpp"

#include <exactly/common/migrations.hpp>

#include <libpq-fe.h>

#include <string>
#include <vector>

namespace exactly::client {
namespace {

constexpr migration schema[] = {
    {1,
     "CREATE TABLE exactly_attempts ("
     " request_id TEXT PRIMARY KEY,"
     " endpoint TEXT NOT NULL,"
     " url TEXT NOT NULL,"
     " created_ms BIGINT NOT NULL);"
     "CREATE INDEX exactly_attempts_age ON exactly_attempts(endpoint, created_ms);"},
};

class pg_journal final : public journal_engine {
 public:
  explicit pg_journal(pg::options opts) : db_(journal_options(std::move(opts))) {
    pg::migrate(db_, "exactly.client.attempts", schema);
  }

  void record(std::string_view endpoint, const std::vector<journal_entry>& entries,
              std::int64_t now_ms) override {
    std::vector<std::string> urls;  // one statement, one round trip, for them all
    for (const journal_entry& e : entries)
      urls.push_back(e.url);
    db_.write(
        "INSERT INTO exactly_attempts(request_id, endpoint, url, created_ms)"
        " SELECT id, $2, url, $4 FROM unnest($1::text[], $3::text[]) AS e(id, url)"
        " ON CONFLICT DO NOTHING",
        ids_of(entries), endpoint, pg_text_array(urls), now_ms);
  }

  void forget(const std::vector<journal_entry>& entries) override {
    if (entries.empty())
      return;
    db_.write("DELETE FROM exactly_attempts WHERE request_id = ANY($1::text[])", ids_of(entries));
  }

  std::vector<journal_entry> older_than(std::string_view endpoint, std::int64_t cutoff_ms,
                                        int limit) override {
    const pg::result r = db_.query(
        "SELECT request_id, url FROM exactly_attempts WHERE endpoint = $1 AND created_ms <= $2"
        " ORDER BY created_ms LIMIT $3",
        endpoint, cutoff_ms, limit);
    std::vector<journal_entry> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1)});
    return out;
  }

 private:
  // The entries' ids as one text[] parameter.
  static std::string ids_of(const std::vector<journal_entry>& entries) {
    std::vector<std::string> ids;
    for (const journal_entry& e : entries)
      ids.push_back(e.request_id);
    return pg_text_array(ids);
  }
  static pg::options journal_options(pg::options o) {
    o.synchronous_commit = false;  // survives the client's crash; the server's crash is the TTL's
    return o;
  }
  pg::connection db_;
};

// A conninfo value quoted as libpq reads it: in single quotes, with \ and ' escaped.
std::string quoted(const char* v) {
  std::string out = "'";
  for (const char* p = v; *p; ++p) {
    if (*p == '\\' || *p == '\'')
      out += '\\';
    out += *p;
  }
  return out + "'";
}

}  // namespace

std::unique_ptr<journal_engine> make_pg_journal(pg::options opts) {
  return std::make_unique<pg_journal>(std::move(opts));
}

pg::options same_database(pg::connection& db) {
  pg::options o;
  PQconninfoOption* info = PQconninfo(db.native());
  if (!info)
    throw pg::error("53200", "cannot read the connection's conninfo: out of memory");
  for (const PQconninfoOption* i = info; i->keyword; ++i) {
    if (i->val && *i->val)
      o.conninfo += std::string(o.conninfo.empty() ? "" : " ") + i->keyword + "=" + quoted(i->val);
  }
  PQconninfoFree(info);
  return o;
}

}  // namespace exactly::client
