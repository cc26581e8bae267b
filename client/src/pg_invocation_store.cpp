// The committed invocations of invoke_http (exactly_invocations), in PostgreSQL.
#include "invocation_store.hpp"
#include "pg_text_array.hpp"

#include <exactly/common/migrations.hpp>
#include <exactly/common/postgres.hpp>

namespace exactly::client {
namespace {

constexpr migration schema[] = {
    {1,
     "CREATE TABLE exactly_invocations ("
     " request_id TEXT PRIMARY KEY,"
     " endpoint TEXT NOT NULL,"
     " url TEXT NOT NULL,"
     " follow_up TEXT NOT NULL,"
     " state BIGINT NOT NULL,"
     " attempts BIGINT NOT NULL DEFAULT 0,"
     " due_ms BIGINT NOT NULL,"
     " last_error TEXT,"
     " created_ms BIGINT NOT NULL);"
     "CREATE INDEX exactly_invocations_due ON exactly_invocations(state, due_ms);"},
    // Until when the server keeps the staged request and the stored response (Unix ms, NULL when
    // not known): from the Exactly-Once-Retention of the PUT's and the POST's answers.
    {2,
     "ALTER TABLE exactly_invocations ADD COLUMN staged_until_ms BIGINT,"
     " ADD COLUMN response_until_ms BIGINT;"},
    // The body and Content-Type the invocation PUT, to stage it again under the same id when its
    // POST meets 404 (a crash took back the staged row). NULL in rows written before: their 404
    // stays a protocol fault (error queue), as it was when they were committed.
    {3, "ALTER TABLE exactly_invocations ADD COLUMN body BYTEA, ADD COLUMN content_type TEXT;"},
};

// Moves a row from state $4 to $1, due at $2, only if it is in $4 now.
constexpr std::string_view move_statement =
    "UPDATE exactly_invocations SET state = $1, due_ms = $2, attempts = 0"
    " WHERE request_id = $3 AND state = $4";

class pg_invocation_engine final : public invocation_engine {
 public:
  explicit pg_invocation_engine(pg::connection& db) : db_(db) {
    pg::migrate(db_, "exactly.client.invocations", schema);
  }

  void insert(const stored_invocation& row, int state, std::int64_t now_ms) override {
    if (!row.body) {
      db_.write(
          "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
          " created_ms) VALUES($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
          row.request_id, row.endpoint, row.url, row.follow_up, state, now_ms, now_ms);
      return;
    }
    db_.write(
        "INSERT INTO exactly_invocations(request_id, endpoint, url, follow_up, state, due_ms,"
        " created_ms, body, content_type) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        " ON CONFLICT DO NOTHING",
        row.request_id, row.endpoint, row.url, row.follow_up, state, now_ms, now_ms,
        pg::bytes{*row.body}, row.content_type);
  }

  bool contains(std::string_view request_id) override {
    return db_.query_int64("SELECT 1 FROM exactly_invocations WHERE request_id = $1", request_id)
        .has_value();
  }

  std::vector<std::string> missing(const std::vector<std::string>& request_ids) override {
    const pg::result r = db_.query(
        "SELECT id FROM unnest($1::text[]) AS id WHERE NOT EXISTS"
        " (SELECT 1 FROM exactly_invocations WHERE request_id = id)",
        pg_text_array(request_ids));
    std::vector<std::string> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back(r.text(i, 0));
    return out;
  }

  std::vector<stored_invocation> due(int state, std::int64_t now_ms, int limit) override {
    std::vector<stored_invocation> out;
    rows_of(db_.query(due_query(false), state, now_ms, limit, ""), state, out);
    return out;
  }

  std::vector<stored_invocation> claim_due(std::string_view endpoint,
                                           const std::vector<int>& states, std::int64_t now_ms,
                                           int limit) override {
    // Locked until the caller's transaction ends; rows a publisher sends now are skipped. One
    // statement per state, all in one round trip.
    std::vector<pg::statement> statements;
    for (const int state : states)
      statements.push_back(pg::bound(due_query(true), state, now_ms, limit, endpoint));
    const std::vector<pg::result> results = db_.query_together(std::move(statements));
    std::vector<stored_invocation> out;
    for (std::size_t k = 0; k < results.size(); ++k)
      rows_of(results[k], states[k], out);
    return out;
  }

  bool move_if_in(std::string_view request_id, int from, int to, std::int64_t due_ms) override {
    // Under READ COMMITTED an UPDATE that meets a row another transaction changed waits for it,
    // then re-checks the WHERE clause against the committed row: one mover wins.
    return db_.execute(move_statement, to, due_ms, request_id, from) == 1;
  }

  void move_if_in_deferred(std::string_view request_id, int from, int to,
                           std::int64_t due_ms) override {
    db_.write(move_statement, to, due_ms, request_id, from);
  }

  void retry_later(std::string_view request_id, std::int64_t due_ms,
                   std::string_view error) override {
    db_.write(
        "UPDATE exactly_invocations SET attempts = attempts + 1, due_ms = $1, last_error = $2"
        " WHERE request_id = $3",
        due_ms, error, request_id);
  }

  void remove(std::string_view request_id) override {
    db_.write("DELETE FROM exactly_invocations WHERE request_id = $1", request_id);
  }

  std::int64_t pending() override {
    return *db_.query_int64("SELECT count(*) FROM exactly_invocations");
  }

  std::optional<stored_invocation> find(std::string_view request_id) override {
    const pg::result r = db_.query(
        "SELECT request_id, endpoint, url, follow_up, attempts, state, last_error,"
        " staged_until_ms, response_until_ms FROM exactly_invocations WHERE request_id = $1",
        request_id);
    if (r.rows() == 0)
      return std::nullopt;
    stored_invocation out{r.text(0, 0), r.text(0, 1), r.text(0, 2), r.text(0, 3),
                          static_cast<int>(r.int64(0, 4))};
    out.state = static_cast<int>(r.int64(0, 5));
    if (!r.is_null(0, 6))
      out.last_error = r.text(0, 6);
    if (!r.is_null(0, 7))
      out.staged_until_ms = r.int64(0, 7);
    if (!r.is_null(0, 8))
      out.response_until_ms = r.int64(0, 8);
    return out;
  }

  void record_staged_until(std::string_view request_id, std::int64_t until_ms) override {
    db_.write("UPDATE exactly_invocations SET staged_until_ms = $1 WHERE request_id = $2", until_ms,
              request_id);
  }

  void record_response_until(std::string_view request_id, std::int64_t until_ms) override {
    db_.write("UPDATE exactly_invocations SET response_until_ms = $1 WHERE request_id = $2",
              until_ms, request_id);
  }

 private:
  // Up to $3 rows in state $1 due at $2, oldest first, of endpoint $4 only unless it is empty;
  // locked (skipping rows another transaction holds) when `claim`.
  static const std::string& due_query(bool claim) {
    // request_id breaks ties so publishers sharing the table move rows in one order.
    static const std::string select =
        "SELECT request_id, endpoint, url, follow_up, attempts, body, content_type"
        " FROM exactly_invocations WHERE state = $1 AND due_ms <= $2"
        " AND ($4 = '' OR endpoint = $4) ORDER BY due_ms, request_id LIMIT $3";
    static const std::string for_update = select + " FOR UPDATE SKIP LOCKED";
    return claim ? for_update : select;
  }

  // Appends the rows of `r`, a due_query()'s answer, read in `state`.
  static void rows_of(const pg::result& r, int state, std::vector<stored_invocation>& out) {
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.text(i, 3),
                     static_cast<int>(r.int64(i, 4))});
      if (!r.is_null(i, 5)) {
        out.back().body = r.text(i, 5);
        out.back().content_type = r.is_null(i, 6) ? "" : r.text(i, 6);
      }
      out.back().state = state;
    }
  }

  pg::connection& db_;
};

}  // namespace

std::unique_ptr<invocation_engine> make_pg_invocation_engine(pg::connection& db) {
  return std::make_unique<pg_invocation_engine>(db);
}

}  // namespace exactly::client
