// The operator's view of a client database: counts and lists read with SQL both engines accept,
// and the error queue's repairs, each in one transaction, on the schema version this build knows
// (never migrated).
#include <exactly/client/inspect.hpp>

#include "invocation_store.hpp"
#include "queue_store.hpp"
#include "sql_rows.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace exactly::client::inspect {
namespace {

constexpr std::array stored_states = {
    invocation_state::post_pending, invocation_state::restage_pending,
    invocation_state::awaiting_follow_up, invocation_state::delete_pending};

// The stored value of the state named `name`; throws std::invalid_argument for another name.
int stored_value_of(std::string_view name) {
  for (const invocation_state s : stored_states) {
    if (name_of(s) == name)
      return stored_value(s);
  }
  throw std::invalid_argument("not a stored invocation state: " + std::string(name));
}

constexpr std::string_view error_columns =
    "SELECT seq, endpoint, message_id, type, attempts, error, failed_ms FROM exactly_error_queue";

error_summary read_error_summary(const sql_row& r) {
  return {r.int64(0), r.text(1), r.text(2), r.text(3), static_cast<int>(r.int64(4)),
          r.text(5),  r.int64(6)};
}

// Refuses (std::runtime_error) a database whose queue tables are not at the schema version this
// build knows: the repairs below are written for that version, and never migrate the database
// under running services.
void require_known_queue_schema(const database& db) {
  const bool has_versions =
      db.kind() == engine::sqlite
          ? db.query_int64(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                " name = 'exactly_schema_version'") == 1
          : db.query_int64(
                "SELECT count(*) FROM (VALUES ('exactly_schema_version')) AS t(name)"
                " WHERE to_regclass(name) IS NOT NULL") == 1;
  const std::int64_t version = has_versions ? db.query_int64(
                                                    "SELECT version FROM exactly_schema_version"
                                                    " WHERE component = 'exactly.client'")
                                                  .value_or(0)
                                            : 0;
  if (version != queue_schema_version) {
    throw std::runtime_error(
        "the client queue schema here is version " + std::to_string(version) +
        (version == 0 ? " (no client tables)" : "") + ", this build knows version " +
        std::to_string(queue_schema_version) +
        ": nothing changed (use the exactly-admin of the release the services run)");
  }
}

// Moves error-queue entry `seq` back into its endpoint's queue, due at now_ms, attempts reset
// (a message id queued already stays queued once); whether the entry was there.
bool requeue_one(const database& db, std::int64_t seq, std::int64_t now_ms) {
  db.execute(
      "INSERT INTO exactly_queue(endpoint, message_id, type, headers, body, due_ms)"
      " SELECT endpoint, message_id, type, headers, body, CAST(? AS BIGINT) FROM"
      " exactly_error_queue WHERE seq = ? ON CONFLICT(endpoint, message_id) DO NOTHING",
      now_ms, seq);
  return db.execute("DELETE FROM exactly_error_queue WHERE seq = ?", seq) == 1;
}

std::optional<error_summary> find_error(const database& db, std::int64_t seq) {
  std::optional<error_summary> out;
  for_each_row(
      db, std::string(error_columns) + " WHERE seq = ?",
      [&](const sql_row& r) { out = read_error_summary(r); }, seq);
  return out;
}

}  // namespace

bool is_client_database(const database& db) {
  if (db.kind() == engine::sqlite) {
    return db.query_int64(
               "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
               " ('exactly_queue', 'exactly_error_queue', 'exactly_invocations')") == 3;
  }
  return db.query_int64(
             "SELECT count(*) FROM (VALUES ('exactly_queue'), ('exactly_error_queue'),"
             " ('exactly_invocations')) AS t(name) WHERE to_regclass(name) IS NOT NULL") == 3;
}

std::vector<queue_depth> queue_depths(const database& db, std::int64_t now_ms) {
  std::vector<queue_depth> out;
  for_each_row(
      db,
      "SELECT endpoint, sum(due), sum(delayed), sum(errors) FROM ("
      " SELECT endpoint, CASE WHEN due_ms <= ? THEN 1 ELSE 0 END AS due,"
      " CASE WHEN due_ms > ? THEN 1 ELSE 0 END AS delayed, 0 AS errors FROM exactly_queue"
      " UNION ALL SELECT endpoint, 0, 0, 1 FROM exactly_error_queue) AS q"
      " GROUP BY endpoint ORDER BY endpoint",
      [&](const sql_row& r) {
        out.push_back({r.text(0), r.int64(1), r.int64(2), r.int64(3)});
      },
      now_ms, now_ms);
  return out;
}

std::vector<std::string> stored_state_names() {
  std::vector<std::string> out;
  for (const invocation_state s : stored_states)
    out.emplace_back(name_of(s));
  return out;
}

std::vector<invocation_count> invocation_counts(const database& db) {
  std::vector<invocation_count> out;
  for (const invocation_state s : stored_states)
    out.push_back({std::string(name_of(s)), 0});
  for_each_row(db, "SELECT state, count(*) FROM exactly_invocations GROUP BY state",
               [&](const sql_row& r) {
                 const invocation_state s = stored_state(static_cast<int>(r.int64(0)));
                 for (invocation_count& c : out) {
                   if (c.state == name_of(s))
                     c.count = r.int64(1);
                 }
               });
  return out;
}

std::vector<invocation_summary> invocations(const database& db, const invocation_filter& f,
                                            std::int64_t now_ms) {
  const std::int64_t state = f.state.empty() ? 0 : stored_value_of(f.state);
  std::vector<invocation_summary> out;
  for_each_row(
      db,
      "SELECT request_id, endpoint, url, state, attempts, last_error, created_ms, due_ms"
      " FROM exactly_invocations WHERE (? = 0 OR state = ?) AND (? = '' OR endpoint = ?)"
      " AND substr(url, 1, length(CAST(? AS TEXT))) = CAST(? AS TEXT) AND created_ms <= ?"
      " ORDER BY created_ms, request_id LIMIT ?",
      [&](const sql_row& r) {
        invocation_summary s;
        s.request_id = r.text(0);
        s.endpoint = r.text(1);
        s.url = r.text(2);
        s.state = name_of(stored_state(static_cast<int>(r.int64(3))));
        s.attempts = static_cast<int>(r.int64(4));
        if (!r.is_null(5))
          s.last_error = r.text(5);
        s.created_ms = r.int64(6);
        s.due_ms = r.int64(7);
        s.age_ms = now_ms - s.created_ms;
        out.push_back(std::move(s));
      },
      state, state, f.endpoint, f.endpoint, f.url_prefix, f.url_prefix, now_ms - f.min_age_ms,
      f.limit);
  return out;
}

std::vector<error_summary> errors(const database& db, const error_filter& f) {
  std::vector<error_summary> out;
  for_each_row(
      db,
      std::string(error_columns) +
          " WHERE (? = '' OR endpoint = ?) AND seq > ? ORDER BY seq LIMIT ?",
      [&](const sql_row& r) { out.push_back(read_error_summary(r)); }, f.endpoint, f.endpoint,
      f.after_seq, f.limit);
  return out;
}

std::optional<error_entry> error(const database& db, std::int64_t seq) {
  std::optional<error_entry> out;
  for_each_row(
      db,
      "SELECT seq, endpoint, message_id, type, headers, body, attempts, error, failed_ms"
      " FROM exactly_error_queue WHERE seq = ?",
      [&](const sql_row& r) {
        out = error_entry{r.int64(0),
                          r.text(1),
                          message{r.text(2), r.text(3), nlohmann::json::parse(r.text(4)),
                                  nlohmann::json::parse(r.text(5))},
                          static_cast<int>(r.int64(6)),
                          r.text(7),
                          r.int64(8)};
      },
      seq);
  return out;
}

std::vector<error_summary> requeue_errors(const database& db, std::span<const std::int64_t> seqs,
                                          std::int64_t now_ms) {
  require_known_queue_schema(db);
  std::vector<error_summary> out;
  database_transaction tx(db);
  for (const std::int64_t seq : seqs) {
    auto entry = find_error(db, seq);
    if (entry && requeue_one(db, seq, now_ms))
      out.push_back(std::move(*entry));
  }
  tx.commit();
  return out;
}

std::vector<error_summary> requeue_all_errors(const database& db, std::string_view endpoint,
                                              std::int64_t now_ms) {
  require_known_queue_schema(db);
  std::vector<error_summary> out;
  database_transaction tx(db);
  std::vector<error_summary> entries;
  for_each_row(
      db, std::string(error_columns) + " WHERE endpoint = ? ORDER BY seq",
      [&](const sql_row& r) { entries.push_back(read_error_summary(r)); }, endpoint);
  for (error_summary& e : entries) {
    if (requeue_one(db, e.seq, now_ms))
      out.push_back(std::move(e));
  }
  tx.commit();
  return out;
}

std::vector<error_summary> drop_errors(const database& db, std::span<const std::int64_t> seqs) {
  require_known_queue_schema(db);
  std::vector<error_summary> out;
  database_transaction tx(db);
  for (const std::int64_t seq : seqs) {
    auto entry = find_error(db, seq);
    if (entry && db.execute("DELETE FROM exactly_error_queue WHERE seq = ?", seq) == 1)
      out.push_back(std::move(*entry));
  }
  tx.commit();
  return out;
}

}  // namespace exactly::client::inspect
