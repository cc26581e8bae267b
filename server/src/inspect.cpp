// The operator's view of a server database (see inspect.hpp): SQL both engines accept, read
// through one small row reader, so each listing is written once.
#include "sql_rows.hpp"

#include <exactly/common/digest.hpp>
#include <exactly/server/inspect.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace exactly::server::inspect {
namespace {

using detail::as_int;
using detail::cell;
using detail::query_rows;
using detail::row;
using detail::sql_arg;

std::optional<std::string> reason_name(const cell& c) {
  if (!c)
    return std::nullopt;
  switch (as_int(c)) {
    case 1:
      return "deleted";
    case 2:
      return "expired";
    case 3:
      return "response-expired";
    default:
      return "unknown (" + *c + ")";
  }
}

// The columns list_interactions and show_interaction start with, read by summary_of().
constexpr std::string_view summary_columns =
    "route, id, owner, state, tombstone_reason, state_since_ms, id_ms, response_status";
constexpr int summary_width = 8;

interaction_summary summary_of(const row& r, std::int64_t now_ms) {
  interaction_summary s;
  s.route = r[0].value_or("");
  s.id = r[1].value_or("");
  s.owner = r[2].value_or("");
  s.st = static_cast<state>(as_int(r[3]));
  if (s.st == state::tombstone)
    s.tombstone_reason = reason_name(r[4]);
  s.state_since_ms = as_int(r[5]);
  s.age_ms = now_ms - s.state_since_ms;
  s.id_ms = as_int(r[6]);
  if (r[7])
    s.response_status = static_cast<unsigned>(as_int(r[7]));
  return s;
}

}  // namespace

bool has_server_schema(const database& db) {
  const char* sql = db.kind() == engine::sqlite
                        ? "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                          " AND name = 'exactly_server_dead_letters'"
                        : "SELECT count(*) FROM pg_catalog.pg_tables"
                          " WHERE tablename = 'exactly_server_dead_letters'"
                          " AND schemaname = ANY(current_schemas(false))";
  return db.query_int64(sql).value_or(0) > 0;
}

std::string_view to_string(state s) {
  switch (s) {
    case state::staged:
      return "staged";
    case state::executed:
      return "executed";
    case state::tombstone:
      return "tombstone";
  }
  return "unknown";
}

std::optional<state> parse_state(std::string_view name) {
  for (state s : {state::staged, state::executed, state::tombstone}) {
    if (to_string(s) == name)
      return s;
  }
  return std::nullopt;
}

std::vector<interaction_summary> list_interactions(const database& db,
                                                   const interaction_filter& f) {
  std::string sql = "SELECT " + std::string(summary_columns) + " FROM exactly_interactions";
  std::vector<sql_arg> args;
  const auto where = [&](std::string_view condition, sql_arg a) {
    sql += args.empty() ? " WHERE " : " AND ";
    sql += condition;
    args.push_back(std::move(a));
  };
  if (f.only_state)
    where("state = ?", static_cast<std::int64_t>(*f.only_state));
  if (f.owner)
    where("owner = ?", *f.owner);
  if (f.route)
    where("route = ?", *f.route);
  if (f.older_than_ms)
    where("state_since_ms <= ?", f.now_ms - *f.older_than_ms);
  sql += f.oldest_first ? " ORDER BY state_since_ms, route, id"
                        : " ORDER BY state_since_ms DESC, route, id";
  sql += " LIMIT ?";
  args.emplace_back(static_cast<std::int64_t>(f.limit));
  std::vector<interaction_summary> out;
  for (const row& r : query_rows(db, sql, summary_width, args))
    out.push_back(summary_of(r, f.now_ms));
  return out;
}

row_counts counts(const database& db) {
  row_counts c;
  for (const row& r :
       query_rows(db, "SELECT kind, sum(n) FROM exactly_row_counts GROUP BY kind", 2, {})) {
    const std::int64_t n = as_int(r[1]);
    switch (as_int(r[0])) {
      case 1:
        c.staged = n;
        break;
      case 2:
        c.executed = n;
        break;
      case 3:
        c.tombstone = n;
        break;
      case 4:
        c.outbox = n;
        break;
      case 5:
        c.dead_letters = n;
        break;
      default:
        break;
    }
  }
  return c;
}

std::optional<interaction_detail> show_interaction(const database& db, std::string_view route,
                                                   std::string_view id, std::int64_t now_ms) {
  const std::string sql = "SELECT " + std::string(summary_columns) +
                          ", request_content_type, request_body, request_sha256,"
                          " response_content_type, response_body"
                          " FROM exactly_interactions WHERE route = ? AND id = ?";
  const auto rows = query_rows(db, sql, summary_width + 5, {std::string(route), std::string(id)});
  if (rows.empty())
    return std::nullopt;
  const row& r = rows[0];
  interaction_detail d;
  static_cast<interaction_summary&>(d) = summary_of(r, now_ms);
  d.request_content_type = r[summary_width];
  d.request_body = r[summary_width + 1];
  if (r[summary_width + 2])
    d.request_sha256_hex = to_hex(*r[summary_width + 2]);
  d.response_content_type = r[summary_width + 3];
  d.response_body = r[summary_width + 4];
  return d;
}

std::vector<outbox_entry> list_outbox(const database& db, int limit) {
  std::vector<outbox_entry> out;
  for (const row& r : query_rows(db,
                                 "SELECT seq, type, source, created_ms, attempts, next_attempt_ms,"
                                 " last_error FROM exactly_server_outbox ORDER BY seq LIMIT ?",
                                 7, {static_cast<std::int64_t>(limit)})) {
    out.push_back({as_int(r[0]), r[1].value_or(""), r[2].value_or(""), as_int(r[3]),
                   static_cast<int>(as_int(r[4])), as_int(r[5]), r[6]});
  }
  return out;
}

namespace {

constexpr std::string_view dead_letter_columns =
    "seq, type, source, created_ms, attempts, error, failed_ms";

dead_letter dead_letter_of(const row& r) {
  return {as_int(r[0]),
          r[1].value_or(""),
          r[2].value_or(""),
          as_int(r[3]),
          static_cast<int>(as_int(r[4])),
          r[5].value_or(""),
          as_int(r[6])};
}

}  // namespace

std::vector<dead_letter> list_dead_letters(const database& db, int limit) {
  std::vector<dead_letter> out;
  const std::string sql = "SELECT " + std::string(dead_letter_columns) +
                          " FROM exactly_server_dead_letters ORDER BY seq LIMIT ?";
  for (const row& r : query_rows(db, sql, 7, {static_cast<std::int64_t>(limit)}))
    out.push_back(dead_letter_of(r));
  return out;
}

std::optional<dead_letter_detail> show_dead_letter(const database& db, std::int64_t seq) {
  const std::string sql = "SELECT " + std::string(dead_letter_columns) +
                          ", body FROM exactly_server_dead_letters WHERE seq = ?";
  const auto rows = query_rows(db, sql, 8, {seq});
  if (rows.empty())
    return std::nullopt;
  dead_letter_detail d;
  static_cast<dead_letter&>(d) = dead_letter_of(rows[0]);
  d.body = rows[0][7].value_or("");
  return d;
}

replay_result replay_dead_letter(const database& db, std::int64_t seq) {
  // Two operators replaying one dead letter at once: the second finds it gone (SQLite: after the
  // first's write lock; PostgreSQL: its insert waits for the first's commit, then does nothing),
  // and the outbox holding it: already_in_outbox.
  database_transaction tx(db);
  const std::int64_t moved = db.execute(
      "INSERT INTO exactly_server_outbox(seq, type, body, source, created_ms, attempts,"
      " next_attempt_ms, last_error) SELECT seq, type, body, source, created_ms, 0, 0, error"
      " FROM exactly_server_dead_letters WHERE seq = ? ON CONFLICT (seq) DO NOTHING",
      seq);
  if (moved == 0) {
    const bool in_outbox =
        db.query_int64("SELECT count(*) FROM exactly_server_outbox WHERE seq = ?", seq)
            .value_or(0) > 0;
    return in_outbox ? replay_result::already_in_outbox : replay_result::not_found;
  }
  db.execute("DELETE FROM exactly_server_dead_letters WHERE seq = ?", seq);
  tx.commit();
  return replay_result::replayed;
}

bool drop_dead_letter(const database& db, std::int64_t seq) {
  database_transaction tx(db);
  const bool dropped = db.execute("DELETE FROM exactly_server_dead_letters WHERE seq = ?", seq) > 0;
  tx.commit();
  return dropped;
}

}  // namespace exactly::server::inspect
