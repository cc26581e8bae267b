#pragma once
// The lifecycle of one invoke_http, sans I/O: its states, the events that move it (server answers,
// handler outcomes), the action each step asks of the runtime, and the retry rules. Pure functions,
// total over their inputs: no SQL, no I/O, no clock. The runtime only carries out these decisions.

#include <exactly/common/protocol.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace exactly::client {

// Where an invocation is. Only post_pending, awaiting_follow_up, delete_pending and restage_pending
// are stored (rows of exactly_invocations); put_sent and staged live in the attempt journal while
// their handler attempt runs, and done is the row's removal.
enum class invocation_state {
  put_sent,            // PUT sent by a handler attempt that has not committed; answer unknown
  staged,              // PUT staged; the handler attempt has not committed yet
  post_pending,        // committed with its handler: POST until a stored response
  restage_pending,     // its POST met 404 request-unknown (a crash took back the staged row):
                       // PUT the kept body again under the same id, then POST again
  awaiting_follow_up,  // stored response; the follow-up is queued: GET, then its handler
  delete_pending,      // follow-up committed or error-queued, or attempt abandoned: DELETE
  done,                // DELETE answered: nothing is left on either side
};

// What came back for a request, as far as the lifecycle cares. An answer carrying
// Exactly-Once-Outcome is a stored response whatever its status (a business 402 or 500 included);
// the protocol puts that header on nothing else.
enum class answer_class {
  no_answer,            // connect failure, reset, timeout: it may or may not have arrived
  stored_response,      // any status with Exactly-Once-Outcome
  created,              // 201
  ok,                   // 200
  no_content,           // 204
  credentials_refused,  // 401, 403
  not_found,            // 404
  conflict,             // 409
  gone,                 // 410, any problem but request-too-old
  too_old,              // 410 request-too-old: the id left the server's acceptance window
  too_large,            // 413
  unprocessable,        // 422
  busy,                 // 408, 429
  server_error,         // 5xx without Exactly-Once-Outcome
  other,                // anything else: 1xx, other 2xx, 3xx, other 4xx
};

// The facts of an HTTP answer that decide its class; `problem` is the name of the problem the
// answer carries ("" when none), which tells a 410 request-too-old from the other 410s.
answer_class classify(bool transport_failed, unsigned status, bool has_outcome,
                      std::string_view problem = {});

enum class lifecycle_event {
  // The answer to the request the state sends (PUT, POST, GET or DELETE), by class.
  answer_no_answer,
  answer_stored_response,
  answer_created,
  answer_ok,
  answer_no_content,
  answer_credentials_refused,
  answer_not_found,
  answer_conflict,
  answer_gone,
  answer_too_old,
  answer_too_large,
  answer_unprocessable,
  answer_busy,
  answer_server_error,
  answer_other,
  put_tries_exhausted,  // the PUT went unanswered (or busy) max_put_tries times
  handler_committed,    // the handler's transaction committed
  handler_failed,       // the handler attempt failed; the message will be tried again
  attempts_exhausted,   // the handler attempt failed for the last time: error queue
  attempt_abandoned,    // the attempt never committed: batch rolled back, or the process died
  // The handler's transaction committed without waiting for its PUT's answer (put_wait::never):
  // the POST may go out at once, and a 404 to it leads to the re-PUT.
  handler_committed_unanswered,
};

lifecycle_event answer_event(answer_class a);

enum class lifecycle_action {
  none,                   // the event does not apply in this state: nothing changes
  resend,                 // send the same request again after backoff (same id, same body)
  commit_when_staged,     // the handler may commit; its commit waits for the PUT's answer
  fail_handler,           // the PUT will not stage: the attempt fails, its id gets a DELETE
  queue_cleanup_delete,   // the id of an attempt that did not commit gets a DELETE
  queue_post,             // the committed invocation is POSTed after commit
  queue_follow_up,        // queue the follow-up, atomically with the POST's completion
  run_follow_up,          // run the follow-up handler with the stored response
  retry_follow_up,        // the follow-up handler runs again later with the same response
  queue_delete,           // the follow-up committed: DELETE the id
  error_queue_follow_up,  // protocol fault: the follow-up goes to the error queue, id DELETEd
  error_queue_follow_up_with_response,  // the follow-up goes to the error queue keeping its
                                        // response, so a requeued one needs no GET; id DELETEd
  forget,                               // the DELETE landed: remove the row
  restage,     // the POST met 404: PUT the kept body again under the same id
  post_again,  // the re-PUT staged it (or it was staged or consumed already): POST again
};

struct lifecycle_step {
  invocation_state next;
  lifecycle_action action;
  friend bool operator==(const lifecycle_step&, const lifecycle_step&) = default;
};

// The one transition function: what `e` does to an invocation in `s`.
lifecycle_step on_event(invocation_state s, lifecycle_event e);

// The request the runtime sends for an invocation in `s` (put_sent and restage_pending: the PUT,
// post_pending: the POST, awaiting_follow_up: the GET, delete_pending: the DELETE); nullopt when
// it sends none.
std::optional<verb> request_of(invocation_state s);

// `s` for an invocation whose row keeps no request body (committed before rows kept them): it
// cannot be staged again, so a restage becomes the protocol fault it was before (error queue).
lifecycle_step without_kept_request(lifecycle_step s);

// A handler attempt's PUT is tried this often while unanswered or busy before the attempt fails.
inline constexpr int max_put_tries = 3;

// What a failed handler attempt means for its message: `failed_before` earlier failures, at most
// `max_attempts` attempts in all. handler_failed (retry later) or attempts_exhausted (error queue).
lifecycle_event handler_failure(int failed_before, int max_attempts);

// Every state and event, for tables and tests that must cover them all.
inline constexpr std::array all_states = {
    invocation_state::put_sent,
    invocation_state::staged,
    invocation_state::post_pending,
    invocation_state::restage_pending,
    invocation_state::awaiting_follow_up,
    invocation_state::delete_pending,
    invocation_state::done,
};
inline constexpr std::array all_events = {
    lifecycle_event::answer_no_answer,
    lifecycle_event::answer_stored_response,
    lifecycle_event::answer_created,
    lifecycle_event::answer_ok,
    lifecycle_event::answer_no_content,
    lifecycle_event::answer_credentials_refused,
    lifecycle_event::answer_not_found,
    lifecycle_event::answer_conflict,
    lifecycle_event::answer_gone,
    lifecycle_event::answer_too_old,
    lifecycle_event::answer_too_large,
    lifecycle_event::answer_unprocessable,
    lifecycle_event::answer_busy,
    lifecycle_event::answer_server_error,
    lifecycle_event::answer_other,
    lifecycle_event::put_tries_exhausted,
    lifecycle_event::handler_committed,
    lifecycle_event::handler_failed,
    lifecycle_event::attempts_exhausted,
    lifecycle_event::attempt_abandoned,
    lifecycle_event::handler_committed_unanswered,
};

// Each list holds every value once, in declaration order: a value added to an enum and not here
// fails to compile.
template <class E, std::size_t N>
constexpr bool lists_every_value(const std::array<E, N>& values, E last) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(values[i]) != i)
      return false;
  }
  return static_cast<std::size_t>(last) + 1 == N;
}
static_assert(lists_every_value(all_states, invocation_state::done));
static_assert(lists_every_value(all_events, lifecycle_event::handler_committed_unanswered));

std::string_view name_of(invocation_state s);
std::string_view name_of(lifecycle_event e);
std::string_view name_of(lifecycle_action a);

}  // namespace exactly::client
