#include "bench_routes.hpp"

#include <exactly/common/digest.hpp>

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace exactly::bench {
namespace {

server::http_response problem(unsigned status, const char* title) {
  return {status,
          "application/problem+json",
          nlohmann::json{{"title", title}, {"status", status}}.dump(),
          {}};
}

void write_one(sqlite::connection& db, std::string_view id, std::string_view body,
               write_options w) {
  if (w.bounded) {
    const std::string slot = std::to_string(std::hash<std::string_view>{}(id) % 1024);
    db.prepare("INSERT OR REPLACE INTO bench_writes(id, body) VALUES(?, ?)")
        .bind_all(slot, body)
        .run();
    return;
  }
  db.prepare("INSERT INTO bench_writes(id, body) VALUES(?, ?)").bind_all(id, body).run();
}

struct raw_payload {
  std::string body;
};

}  // namespace

void install_connector_route(server::connector& c, write_options w) {
  c.db().exec(
      "CREATE TABLE IF NOT EXISTS bench_writes (id TEXT PRIMARY KEY, body TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS idempotency_keys (principal TEXT NOT NULL, key TEXT NOT NULL,"
      " fingerprint BLOB NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,"
      " created_ms INTEGER NOT NULL, PRIMARY KEY (principal, key))");
  c.route<raw_payload>(
      connector_route,
      [](const server::incoming_request& in) -> server::parse_result<raw_payload> {
        return raw_payload{std::string(in.body)};
      },
      [w](server::session<raw_payload>& s) {
        write_one(s.db(), s.id().to_string(), s.payload().body, w);
        return server::stored_response{200, "application/json", R"({"ok":true})"};
      });
}

void install_http_routes(server::http_server& http, server::connector& c, write_options w) {
  http.add_route("POST", "/plain/{id}", [&c, w](const server::http_request& r) {
    write_one(c.db(), r.params.at("id"), r.body, w);
    return server::http_response{200, "application/json", R"({"ok":true})", {}};
  });
  // The draft's semantics: a key is bound to its first request's fingerprint; the same request
  // again gets the stored response, a different one 422. The write and the stored response
  // commit together on the storage thread, so no request is ever seen in flight (no 409 here).
  http.add_route("POST", "/idem/write", [&c, w](const server::http_request& r) {
    const std::string key(r.header("Idempotency-Key"));
    if (key.empty() || key.size() > 255)
      return problem(400, "an Idempotency-Key header of 1 to 255 characters is required");
    const std::string print = sha256(r.body);
    auto& db = c.db();
    auto& q = db.prepare(
        "SELECT fingerprint, status, body FROM idempotency_keys WHERE principal = ? AND key = ?");
    q.bind_all(r.principal, key);
    if (q.step()) {
      const bool same = q.text(0) == print;
      server::http_response stored{
          static_cast<unsigned>(q.int64(1)), "application/json", q.text(2), {}};
      q.reset();
      if (!same)
        return problem(422, "the Idempotency-Key was used with a different request");
      return stored;
    }
    q.reset();
    write_one(db, r.principal + "/" + key, r.body, w);
    const std::string response = nlohmann::json{{"ok", true}, {"key", key}}.dump();
    db.prepare("INSERT INTO idempotency_keys VALUES (?, ?, ?, 201, ?, strftime('%s','now'))")
        .bind_all(r.principal, key)
        .bind_blob(3, print)
        .bind(4, response)
        .run();
    return server::http_response{201, "application/json", response, {}};
  });
}

}  // namespace exactly::bench
