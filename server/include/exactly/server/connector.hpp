#pragma once
// The connector: the protocol's PUT/POST/GET/DELETE on routes whose business logic runs once.
// Thread-safety: handle(), sweep() and dispatch_outbox() must be called from one thread at a
// time per connection (http_server runs them on its storage threads, one per connection);
// route()/on_message() before serving.

#include <exactly/common/clock.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>
#include <exactly/server/connector_types.hpp>
#include <exactly/server/session.hpp>
#include <exactly/server/stored_response.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exactly::server {

struct connector_options {
  // The engine: SQLite in the file db_path (the default), or PostgreSQL when `postgres` is set,
  // which lets several connector processes serve one database (db_path and db are then unused).
  std::string db_path = "exactly-server.db";
  sqlite::options db{};                   // synchronous=FULL unless the user opts out
  std::optional<pg::options> postgres{};  // synchronous_commit=on unless the user opts out
  // PostgreSQL only: the connections requests are spread over, by their route and id (1 on
  // SQLite, where any other figure is refused). http_server runs one storage thread per
  // connection, so with more than one, route logic, message handlers and user routes run on
  // several threads at once and must be safe to.
  std::size_t postgres_connections = 1;
  // PostgreSQL with 2 or more connections: the last one takes only the PUTs and DELETEs that may
  // commit unflushed, so they never wait behind a COMMIT that waits for the disk; POSTs, user
  // routes and the background jobs take the others, by route and id. For a disk whose flush is
  // slow; on a fast one, the lanes by id carry more. Refused with fewer connections; unused with
  // server_options::flush_every_commit. The requests of one id then meet on two connections: a
  // PUT sent again while its POST's group waits for the disk waits on the id's lock, and the
  // lane with it.
  bool postgres_unflushed_lane = false;
  timing times{};                                 // staged TTL, retention, acceptance window
  std::int64_t max_staged_per_principal = 10000;  // then PUT is 429 too-many-staged
  // Request body bytes a principal may hold staged; a PUT that would exceed it is 429
  // too-many-staged, like one over the count.
  std::int64_t max_staged_bytes_per_principal = 256LL << 20;
  clock_fn clock = system_now_ms;  // must be thread-safe: the storage and network threads call it
  int outbox_max_attempts = 10;    // then the message goes to dead letters
  // GETs read through a connection of their own (a read-only one on SQLite WAL file databases;
  // one more connection on PostgreSQL), so they never wait for the writes in flight; see
  // connector::read().
  bool separate_reads = true;
  // How long such a GET waits on a lock held elsewhere (SQLite: another process, a recovery;
  // PostgreSQL: a table locked exclusively) before it is answered 503.
  std::chrono::milliseconds read_lock_timeout{50};
};

// The body of a PUT as the route's parse step sees it.
struct incoming_request {
  std::string_view content_type;
  std::string_view body;
};

// A parse step's refusal; `detail` is sent in the 422 invalid-payload problem.
struct invalid_payload {
  std::string detail;
};

template <class Payload>
using parse_result = std::variant<Payload, invalid_payload>;

class connector {
 public:
  // Opens and migrates the database. Throws the engine's error (an exactly::storage_error) on
  // failure: a file that cannot be opened, PostgreSQL unreachable or refusing the credentials,
  // missing privileges to create the tables.
  explicit connector(connector_options opts);
  ~connector();
  connector(const connector&) = delete;
  connector& operator=(const connector&) = delete;

  // Registers a route template ending in "/{id}". `parse` runs at PUT (a refusal or an
  // exception is 422, not staged) and again before `logic` at POST; `logic` runs once per staged
  // id, in the transaction that stores its response. An exception from `logic` (its SQL's
  // constraint violations too) is 500 execution-failed, a storage failure 503; nothing of it
  // commits and the id stays staged. Throws std::invalid_argument for a bad/duplicate template.
  template <class Payload>
  void route(std::string route_template,
             std::function<parse_result<Payload>(const incoming_request&)> parse,
             std::function<stored_response(session<Payload>&)> logic);

  // Registers the local handler of outbox messages of `type`. A throwing handler is retried
  // with backoff, then dead-lettered after outbox_max_attempts.
  void on_message(std::string type, std::function<void(message_context&)> handler);

  // Runs `fn` each time an execution has become durable, on the thread that committed it and
  // before its answer goes out; `fn` must not throw. One at a time: a later call replaces it,
  // nullptr clears it. http_server uses it to wake its outbox dispatcher.
  void on_durable_execution(std::function<void()> fn);

  // Route templates registered, for the HTTP router.
  std::vector<std::string> routes() const;

  // Carries out one protocol request. Never throws: a storage failure answers 503
  // storage-unavailable, a failing business logic 500 execution-failed, a defect of the server
  // 500 internal-error. An execution's hooks (counting, crash point) run once it has committed.
  interaction_response handle(const interaction_request& r);
  // Whether `r` may be committed without a flush (interaction_request::unflushed): a PUT or a
  // DELETE of an id well inside the acceptance window (a minute or more from its edge). Deciding
  // that an unknown id is too old persists the time it used in a flushed commit, so that a crash
  // and a clock set back can never make the server stage that id again.
  bool may_defer_flush(const interaction_request& r) const;
  // Carries out a GET through the connection of the reads (read-only on SQLite): it sees only
  // committed state (with synchronous=FULL, only durable state), never waits for a write in
  // flight, and may run on one other thread while handle() runs. Answers failures as handle()
  // does.
  // Throws std::logic_error for another verb or when !has_separate_reads().
  interaction_response read(const interaction_request& r);
  // Whether read() is available (connector_options::separate_reads on a WAL file database or
  // on PostgreSQL).
  bool has_separate_reads() const;
  // Whether read() waits for a round trip to the database (PostgreSQL): run it on a thread of
  // its own, not the network thread.
  bool reads_take_a_round_trip() const;
  // Enforces staged TTL, response retention and tombstone purge once, now.
  sweep_result sweep();
  // Delivers due outbox messages (those up to `max_seq`) to local handlers; returns how many
  // were handled.
  std::size_t dispatch_outbox(int batch = 64,
                              std::int64_t max_seq = std::numeric_limits<std::int64_t>::max());
  // The seq of the newest outbox message (0 if none): with max_seq, the messages already sent.
  std::int64_t outbox_last_seq();

  state_counts counts();
  std::int64_t outbox_pending();
  std::int64_t dead_letters();
  connector_stats stats() const;
  // The connection business logic, message handlers and user routes write through (on the
  // storage thread: the calling thread's connection, see use_connection_on_this_thread()); its
  // after_commit() hooks run when the connector's transactions commit.
  // db() on SQLite, pg() on PostgreSQL (the other throws std::logic_error); storage() either.
  sqlite::connection& db();
  pg::connection& pg();
  database storage();
  // The database of connection `i` (< connections()), whoever calls; std::out_of_range else.
  database storage(std::size_t i);
  // The connections the connector holds (connector_options::postgres_connections; 1 on SQLite).
  std::size_t connections() const;
  // Whether the last connection takes only the PUTs and DELETEs that may commit unflushed
  // (connector_options::postgres_unflushed_lane).
  bool unflushed_lane() const;
  // Makes the calling thread use connection `i` (< connections()) for every call above and
  // below, db(), pg() and storage() included; a thread that never called it uses connection 0.
  // A thread serves one connector this way. Throws std::out_of_range for a bad `i`.
  void use_connection_on_this_thread(std::size_t i);
  // Whether the store is reachable as far as the last storage call on the first connection
  // knew (any thread): false while PostgreSQL is down, until a reconnection succeeds. Always
  // true on SQLite.
  bool ready() const;
  const connector_options& options() const;

 private:
  using validate_fn = std::function<std::optional<std::string>(const incoming_request&)>;
  using execute_fn = std::function<stored_response(basic_session&, const incoming_request&)>;
  void add_route(std::string route_template, validate_fn validate, execute_fn execute);

  struct impl;
  std::unique_ptr<impl> impl_;
};

template <class Payload>
void connector::route(std::string route_template,
                      std::function<parse_result<Payload>(const incoming_request&)> parse,
                      std::function<stored_response(session<Payload>&)> logic) {
  validate_fn validate = [parse](const incoming_request& in) -> std::optional<std::string> {
    try {
      auto parsed = parse(in);
      if (auto* bad = std::get_if<invalid_payload>(&parsed))
        return std::move(bad->detail);
    } catch (const std::exception& e) {  // a parse step that throws refuses the payload too
      return std::string("the payload could not be parsed: ") + e.what();
    }
    return std::nullopt;
  };
  execute_fn execute = [parse, logic](basic_session& base,
                                      const incoming_request& in) -> stored_response {
    auto parsed = parse(in);
    if (auto* bad = std::get_if<invalid_payload>(&parsed)) {
      throw std::runtime_error("staged payload no longer parses: " + bad->detail);
    }
    session<Payload> s(base, std::get<Payload>(parsed));
    return logic(s);
  };
  add_route(std::move(route_template), std::move(validate), std::move(execute));
}

}  // namespace exactly::server
