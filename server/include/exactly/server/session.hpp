#pragma once
// What a route's business logic and a local message handler see: the storage transaction,
// the request, and send() to the server outbox (committed in the same transaction).

#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/request_id.hpp>
#include <exactly/common/sqlite.hpp>

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace exactly::server {

// Records an outgoing message (type, JSON body) in the current transaction.
using send_fn = std::function<void(std::string_view type, const nlohmann::json& body)>;

// The untyped part of a session. Valid only during the call it is passed to.
class basic_session {
 public:
  basic_session(database db, std::string_view route, const request_id& id,
                std::string_view principal, send_fn send)
      : db_(db), route_(route), id_(id), principal_(principal), send_(std::move(send)) {}

  // The connection; everything done through it commits with the stored response, or not at all.
  // db() on the SQLite engine, pg() on PostgreSQL; the other one throws std::logic_error.
  sqlite::connection& db() { return db_.as_sqlite(); }
  pg::connection& pg() { return db_.as_postgres(); }
  // The engine's handle, for code written for both engines.
  const database& storage() const { return db_; }
  std::string_view route() const { return route_; }
  const request_id& id() const { return id_; }
  std::string_view principal() const { return principal_; }
  // Queues a message for this server's local handlers; delivered only if the transaction commits.
  void send(std::string_view type, const nlohmann::json& body) { send_(type, body); }

 private:
  database db_;
  std::string_view route_;
  const request_id& id_;
  std::string_view principal_;
  send_fn send_;
};

// A session carrying the payload the route's parse step produced.
template <class Payload>
class session : public basic_session {
 public:
  session(basic_session& base, const Payload& payload) : basic_session(base), payload_(payload) {}
  const Payload& payload() const { return payload_; }

 private:
  const Payload& payload_;
};

// A message delivered from the server outbox to a local handler, in its own transaction.
class message_context {
 public:
  message_context(database db, std::string_view type, const nlohmann::json& body, send_fn send)
      : type(type), body(body), send(std::move(send)), db_(db) {}
  // The connection of the handler's transaction: db() on SQLite, pg() on PostgreSQL.
  sqlite::connection& db() { return db_.as_sqlite(); }
  pg::connection& pg() { return db_.as_postgres(); }
  const database& storage() const { return db_; }

  std::string_view type;
  const nlohmann::json& body;
  send_fn send;  // further messages, committed with this handler's transaction

 private:
  database db_;
};

}  // namespace exactly::server
