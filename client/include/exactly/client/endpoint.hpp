#pragma once
// A named endpoint: a durable input queue in SQLite or PostgreSQL and handlers by message type.
// Each message is handled in ONE transaction with everything its handler does (state changes, sent
// messages) and its removal from the queue, or not at all. Failing handlers are retried with capped
// exponential backoff and jitter, then moved to the error queue. Handlers may invoke_http: the
// protocol's PUT, POST, GET and DELETE are carried out here step by step. Not thread-safe: one
// thread drives an endpoint (several endpoints, even in several processes, may share a database).

#include <exactly/client/http_transport.hpp>
#include <exactly/client/invocation_info.hpp>
#include <exactly/client/message.hpp>
#include <exactly/common/clock.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::client {

// When a handler learns whether its PUT was staged.
enum class put_wait {
  // invoke_http returns at once; once the batch's handlers have run, the PUTs of those that
  // succeeded go out together (journaled in one commit; a failed handler's PUTs never go out),
  // and the batch waits for their answers before its commit. If one is not accepted, the batch
  // is rolled back, its ids are DELETEd, and it runs again one handler at a time with
  // put_wait::in_handler. The handlers of such a batch run twice; the outcomes committed are the
  // same. A batch of one message waits in the handler.
  before_commit,
  // invoke_http returns once its PUT is staged and throws into the handler when it is refused:
  // one PUT round trip after another within a batch.
  in_handler,
  // As before_commit, but the batch commits while its PUTs are under way, and each POST may go
  // out as soon as it has (proto-spec §9 rule 9): the PUTs' time is off the invocation's path
  // (with a transport whose start() has sent the request and returns before the answer, as the
  // Beast transport's does). A turn of process_due() waits for the oldest PUTs beyond
  // endpoint_options::max_unanswered_puts.
  // The PUT's answer changes nothing: a POST that finds no staged request (404) stages it again
  // and POSTs again (rule 6). So a PUT the server refuses is not found by the handler's attempt:
  // its invocation, committed, goes on re-PUTting and POSTing (less often as its id ages) until
  // the id leaves the server's acceptance window, then to the error queue (rule 7). The first
  // PUT's refusal is logged, a re-PUT's is the invocation's last error; the first PUT's
  // retention is not recorded (invocation_info::staged_until_ms is set by a re-PUT's answer
  // only). A batch rerun one message at a time after the database refused it, and a follow-up
  // run with its POST's answer, still wait in the handler.
  never,
};

struct endpoint_options {
  int max_attempts = 5;  // handler attempts before the error queue
  std::chrono::milliseconds retry_base{100};
  std::chrono::milliseconds retry_cap{30000};
  clock_fn clock = system_now_ms;
  std::shared_ptr<http_transport> transport{};  // required for invoke_http
  // Where ids PUT by uncommitted attempts are journaled. SQLite: a file path; "" =
  // "<db path>.attempts" (":memory:" for an in-memory database). PostgreSQL: a conninfo; "" = the
  // endpoint's own database, through a second connection.
  std::string attempt_journal{};
  // A journaled id this old whose handler never committed is DELETEd by publish_due(), which
  // reads the journal at most every quarter of this (at once again after a full page of 64).
  std::chrono::milliseconds orphan_grace{5000};
  put_wait wait_for_put = put_wait::before_commit;
  // put_wait::never: how many PUTs may stay unanswered once a turn of process_due() has taken the
  // answers that came; beyond it the turn waits for the oldest, each until the transport answers
  // or gives up (its timeout), so the worker commits no faster than the server answers. At least
  // 1, whatever wait_for_put (the constructor throws std::invalid_argument).
  std::size_t max_unanswered_puts = 1024;
  // true: a follow-up runs as soon as its POST's answer arrives, in the transaction that records
  // it (one local commit for both, no GET); if its handler fails it is queued with that response,
  // as after a failed attempt. false: it is queued, and GETs the stored response when it runs.
  bool follow_up_with_post_answer = true;
};

// Headers a follow-up message carries to name its interaction.
inline constexpr const char* request_id_header = "exactly-request-id";
inline constexpr const char* url_header = "exactly-url";

namespace detail {
struct handler_scope;  // what the runtime lends a running handler
}
struct endpoint_core;  // an endpoint's parts, private to the library

// What a handler sees. Valid only during the handler call.
class handler_context {
 public:
  explicit handler_context(detail::handler_scope& scope) : scope_(scope) {}

  // The SQLite database the queue lives in: the user's state changes commit with the handler.
  // Throws std::logic_error when the endpoint is on PostgreSQL (use pg()).
  sqlite::connection& db();
  // The PostgreSQL connection the queue lives on, inside the handler's transaction (a savepoint):
  // the user's state changes commit with the handler. Throws std::logic_error on SQLite.
  pg::connection& pg();
  // The endpoint's database, either engine.
  exactly::database database();
  const message& incoming() const;
  std::string_view endpoint_name() const;
  // Queues `m` for endpoint `to` in this database, committed only if the handler commits.
  // An empty m.id gets a fresh UUIDv7.
  void send(std::string_view to, message m);
  // Mints a request id, PUTs `body` at once to `url_template` with {id} replaced, and records the
  // POST and `follow_up` (delivered to this endpoint once the POST has an outcome) in this
  // handler's transaction. A refused or unreachable PUT fails this attempt: thrown here, or with
  // put_wait::before_commit found before the batch commits (with put_wait::never it does not: see
  // put_wait). Returns the request id.
  std::string invoke_http(std::string_view url_template, std::string_view body,
                          std::string_view content_type, message follow_up);
  // In a follow-up handler: the stored response of its interaction; nullptr elsewhere.
  const http_result* response() const;

 private:
  detail::handler_scope& scope_;
};

using handler = std::function<void(handler_context&)>;

class endpoint {
 public:
  // Migrates the client schema in `db` (a sqlite::connection& or a pg::connection&), which must
  // outlive the endpoint. Throws std::invalid_argument for options out of range, before that.
  endpoint(std::string name, database db, endpoint_options opts = {});
  ~endpoint();
  endpoint(endpoint&&) noexcept;
  endpoint& operator=(endpoint&&) = delete;

  // Registers the handler of `type`; a later registration replaces an earlier one. A handler
  // attempt fails (rolled back, tried again after a backoff, error-queued after max_attempts)
  // when the handler throws, also the error of one of its own statements that the database
  // refused as it ran (a constraint, a syntax error). Storage trouble (busy, I/O, connection
  // lost) fails the whole batch instead: nothing of it commits and no attempt is counted. A
  // refusal that fails the whole batch (one that ended the transaction, a constraint checked at
  // COMMIT, on PostgreSQL a failed write sent with a later round trip) runs its messages again
  // one at a time, and the one refused alone is charged an attempt (client/DESIGN.md, "Errors").
  void on(std::string type, handler h);
  // Registers a typed handler; the body is converted with nlohmann's from_json for T, and a body
  // that does not convert fails the attempt like a throwing handler.
  template <class T>
  void on(std::string type, std::function<void(handler_context&, const T&)> h) {
    on(std::move(type),
       [h = std::move(h)](handler_context& ctx) { h(ctx, ctx.incoming().body.get<T>()); });
  }

  // Sends `m` to endpoint `to` in a transaction of its own (for code outside handlers).
  void send(std::string_view to, message m);
  // Handles up to `limit` due messages in one transaction, each handler in a savepoint. Returns
  // how many left the queue (handled, or moved to the error queue). A follow-up message first
  // GETs its stored response. Storage failures throw the engine's error (an
  // exactly::storage_error); a batch the database refuses runs its messages one at a time, and
  // a refusal of the attempt charged to one of them throws after the others, which stay
  // committed (client/DESIGN.md).
  std::size_t process_due(int limit = 64);
  // Sends due POSTs (then runs or queues their follow-ups), re-PUTs and DELETEs, after queuing the
  // DELETE of journaled ids whose attempt ended uncommitted. Returns how many finished.
  std::size_t publish_due(int limit = 64);
  // Runs process_due and publish_due until neither has anything due now.
  void run_until_idle();

  const std::string& name() const;
  // Messages in this endpoint's queue.
  std::int64_t queued();
  // invoke_http calls of this database not finished yet (POST, follow-up or DELETE to come).
  std::int64_t pending_invocations();
  // What this database records of the invoke_http of `request_id` until it is finished (its
  // DELETE answered): state, failed sends, and until when the server keeps the staged request and
  // the stored response; nullopt when there is no such invocation (any more).
  std::optional<invocation_info> invocation(std::string_view request_id);
  // This endpoint's error queue, oldest first.
  std::vector<error_entry> errors();
  // Puts error-queue entry `seq` back in its queue, attempts reset; false if there is none. A
  // follow-up error-queued by its handler keeps its stored response and runs with it again.
  bool requeue_error(std::int64_t seq);

 private:
  friend endpoint_core& core_of(endpoint& e);
  struct impl;
  std::unique_ptr<impl> impl_;
};

// Queues `m` for endpoint `to` in the caller's open transaction on `db` (either engine), for code
// outside handlers that changes its own state together with sending (creates the client tables
// if needed). An empty m.id gets a fresh UUIDv7; a message id already queued there is ignored.
void send_in_transaction(database db, std::string_view to, message m);

}  // namespace exactly::client
