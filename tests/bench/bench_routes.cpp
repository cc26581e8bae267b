#include "bench_routes.hpp"

#include <exactly/common/database.hpp>
#include <exactly/common/digest.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace exactly::bench {
namespace {

server::http_response problem(unsigned status, const char* title) {
  return {status,
          "application/problem+json",
          nlohmann::json{{"title", title}, {"status", status}}.dump(),
          {}};
}

// The business write of every route: one row (one of 1024, overwritten, when bounded).
void write_one(const database& db, std::string_view id, std::string_view body, write_options w) {
  if (w.bounded) {
    db.execute(
        "INSERT INTO bench_writes(id, body) VALUES(?, ?)"
        " ON CONFLICT(id) DO UPDATE SET body = excluded.body",
        std::to_string(std::hash<std::string_view>{}(id) % 1024), body);
    return;
  }
  db.execute("INSERT INTO bench_writes(id, body) VALUES(?, ?)", id, body);
}

// A stored idempotency-key answer: its request's fingerprint, status and body.
struct key_record {
  std::string fingerprint;
  unsigned status = 0;
  std::string body;
};

std::optional<key_record> find_key(const database& db, const std::string& principal,
                                   const std::string& key) {
  if (db.kind() == engine::postgres) {
    // Requests of one key wait for one another, whichever connection or process has them: the
    // lock goes out with the lookup, in its round trip.
    db.as_postgres().defer("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                           principal + ' ' + key);
    const pg::result q = db.as_postgres().query(
        "SELECT fingerprint, status, body FROM idempotency_keys WHERE principal = $1 AND key = $2",
        principal, key);
    if (q.rows() == 0)
      return std::nullopt;
    return key_record{q.text(0, 0), static_cast<unsigned>(q.int64(0, 1)), q.text(0, 2)};
  }
  auto& q = db.as_sqlite().prepare(
      "SELECT fingerprint, status, body FROM idempotency_keys WHERE principal = ? AND key = ?");
  q.bind_all(principal, key);
  std::optional<key_record> r;
  if (q.step())
    r = key_record{q.text(0), static_cast<unsigned>(q.int64(1)), q.text(2)};
  q.reset();
  return r;
}

// Stores a key's answer at `now_ms`, after deleting the keys stored before `expired_before_ms`.
// The DELETE runs only when the oldest key has expired, which one probe of the index tells: on
// PostgreSQL the prepared DELETE's generic plan, made for any cutoff while the new table had no
// statistics, was a sequential scan, run at every request (the route at 64 clients: 1165 ops/s
// with it, 2150 with the probe).
void store_key(const database& db, const std::string& principal, const std::string& key,
               const std::string& fingerprint, const std::string& response, std::int64_t now_ms,
               std::int64_t expired_before_ms) {
  const auto oldest = db.query_int64("SELECT min(created_ms) FROM idempotency_keys");
  if (oldest && *oldest < expired_before_ms)
    db.execute("DELETE FROM idempotency_keys WHERE created_ms < ?", expired_before_ms);
  if (db.kind() == engine::postgres) {
    db.as_postgres().execute("INSERT INTO idempotency_keys VALUES ($1, $2, $3, 201, $4, $5)",
                             principal, key, pg::bytes{fingerprint}, response, now_ms);
    return;
  }
  db.as_sqlite()
      .prepare("INSERT INTO idempotency_keys VALUES (?, ?, ?, 201, ?, ?)")
      .bind_all(principal, key)
      .bind_blob(3, fingerprint)
      .bind(4, response)
      .bind(5, now_ms)
      .run();
}

struct raw_payload {
  std::string body;
};

}  // namespace

void install_connector_route(server::connector& c, write_options w) {
  const bool pg = c.storage().kind() == engine::postgres;
  const std::string tables =
      std::string(
          "CREATE TABLE IF NOT EXISTS bench_writes (id TEXT PRIMARY KEY, body TEXT NOT NULL);"
          "CREATE TABLE IF NOT EXISTS idempotency_keys (principal TEXT NOT NULL, key TEXT NOT NULL,"
          " fingerprint ") +
      (pg ? "BYTEA" : "BLOB") +
      " NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,"
      " created_ms BIGINT NOT NULL, PRIMARY KEY (principal, key));"
      "CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_ms)";
  if (pg)
    c.pg().exec(tables);
  else
    c.db().exec(tables);
  c.route<raw_payload>(
      connector_route,
      [](const server::incoming_request& in) -> server::parse_result<raw_payload> {
        return raw_payload{std::string(in.body)};
      },
      [w](server::session<raw_payload>& s) {
        write_one(s.storage(), s.id().to_string(), s.payload().body, w);
        return server::stored_response{200, "application/json", R"({"ok":true})"};
      });
}

void install_http_routes(server::http_server& http, server::connector& c, write_options w,
                         key_options k) {
  http.add_route("POST", "/plain/{id}", [&c, w](const server::http_request& r) {
    write_one(c.storage(), r.params.at("id"), r.body, w);
    return server::http_response{200, "application/json", R"({"ok":true})", {}};
  });
  // The draft's semantics: a key is bound to its first request's fingerprint; the same request
  // again gets the stored response, a different one 422. The write and the stored response
  // commit together, and requests of one key wait for one another (one storage thread on
  // SQLite, a lock per key on PostgreSQL), so no request is ever seen in flight (no 409 here).
  // Keys older than k.window are deleted as a new one is stored (an index on created_ms).
  http.add_route("POST", "/idem/write", [&c, w, k](const server::http_request& r) {
    const std::string key(r.header("Idempotency-Key"));
    if (key.empty() || key.size() > 255)
      return problem(400, "an Idempotency-Key header of 1 to 255 characters is required");
    const std::string print = sha256(r.body);
    const database db = c.storage();
    if (const auto stored = find_key(db, r.principal, key)) {
      if (stored->fingerprint != print)
        return problem(422, "the Idempotency-Key was used with a different request");
      return server::http_response{stored->status, "application/json", stored->body, {}};
    }
    // A key used again once it expired makes a new write: its row is named by the time too.
    const std::int64_t now = k.clock();
    write_one(db, r.principal + "/" + key + "/" + std::to_string(now), r.body, w);
    const std::string response = nlohmann::json{{"ok", true}, {"key", key}}.dump();
    store_key(db, r.principal, key, print, response, now, now - k.window.count());
    return server::http_response{201, "application/json", response, {}};
  });
}

int drop_counter_triggers(sqlite::connection& db) {
  std::vector<std::string> names;
  auto& q = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'trigger'"
      " AND (name GLOB 'exactly_count_*' OR name GLOB 'exactly_staged_*')");
  while (q.step())
    names.push_back(q.text(0));
  q.reset();
  for (const std::string& name : names)
    db.exec("DROP TRIGGER \"" + name + "\"");
  return static_cast<int>(names.size());
}

}  // namespace exactly::bench
