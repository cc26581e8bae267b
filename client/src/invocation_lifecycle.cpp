// The lifecycle of one invoke_http as pure functions: answer classes, transitions, retry rules.
#include "invocation_lifecycle.hpp"

namespace exactly::client {
namespace {

using state = invocation_state;
using event = lifecycle_event;
using action = lifecycle_action;

constexpr lifecycle_step stay(state s) {
  return {s, action::none};
}

// Answers that say nothing about the request itself: the same request may be sent again safely.
bool send_again(event e) {
  switch (e) {
    case event::answer_no_answer:
    case event::answer_busy:
    case event::answer_server_error:
    case event::answer_credentials_refused:  // credentials: wait for them to be fixed
      return true;
    default:
      return false;
  }
}

bool is_answer(event e) {
  return static_cast<std::size_t>(e) <= static_cast<std::size_t>(event::answer_other);
}

// A handler attempt's PUT: staged (201, or 200 when a lost try had staged it), sent again, or
// refused, which fails the attempt (400, 409, 410, 413, 422, ...).
lifecycle_step on_put_sent(event e) {
  if (e == event::answer_created || e == event::answer_ok)
    return {state::staged, action::commit_when_staged};
  if (send_again(e))
    return {state::put_sent, action::resend};
  switch (e) {
    case event::handler_committed:  // its commit must wait for the PUT's answer
      return {state::put_sent, action::commit_when_staged};
    case event::handler_committed_unanswered:  // the POST tells what the PUT left (rule 9)
      return {state::post_pending, action::queue_post};
    case event::handler_failed:
    case event::attempts_exhausted:
    case event::attempt_abandoned:
      return {state::delete_pending, action::queue_cleanup_delete};
    default:  // a refusal, or put_tries_exhausted
      return {state::delete_pending, action::fail_handler};
  }
}

lifecycle_step on_staged(event e) {
  switch (e) {
    case event::handler_committed:
    case event::handler_committed_unanswered:
      return {state::post_pending, action::queue_post};
    case event::handler_failed:
    case event::attempts_exhausted:
    case event::attempt_abandoned:
      return {state::delete_pending, action::queue_cleanup_delete};
    default:
      return stay(state::staged);
  }
}

// POST until a stored response. 404 request-unknown means the server lost the staged row (a crash
// took back a PUT it had acknowledged before the row was durable): the id left no trace, so staging
// it again cannot execute anything twice. Any other answer is a protocol fault (410
// request-consumed, -expired or -too-old, ...): never re-invoked under a new id, the follow-up goes
// to the error queue and the id is DELETEd.
lifecycle_step on_post_pending(event e) {
  if (e == event::answer_stored_response)
    return {state::awaiting_follow_up, action::queue_follow_up};
  if (send_again(e))
    return {state::post_pending, action::resend};
  if (e == event::answer_not_found)
    return {state::restage_pending, action::restage};
  if (is_answer(e))
    return {state::delete_pending, action::error_queue_follow_up};
  return stay(state::post_pending);
}

// PUT the kept body again under the same id, then POST again: the POST tells what the re-PUT
// left (executed, staged, or still unknown: 404 again). Busy, failing or credentials refused (as
// for a POST): the PUT again, later. Only 410 request-too-old is final (the id can never be staged
// again): error queue, and the id is DELETEd. Any other refusal (404 of another principal's row,
// 409, 413, 422, ...) also goes back to POST, never to the error queue: while the id is young a
// delayed copy of the first PUT could still stage it, and a delayed POST execute it after its
// message was error-queued (proto-spec/model). The loop ends once the id is too old.
lifecycle_step on_restage_pending(event e) {
  switch (e) {
    case event::answer_busy:
    case event::answer_server_error:
    case event::answer_credentials_refused:
      return {state::restage_pending, action::resend};
    case event::answer_too_old:
      return {state::delete_pending, action::error_queue_follow_up};
    default:
      if (is_answer(e))
        return {state::post_pending, action::post_again};
      return stay(state::restage_pending);
  }
}

// GET the stored response, then run the follow-up handler with it.
lifecycle_step on_awaiting_follow_up(event e) {
  if (e == event::answer_stored_response)
    return {state::awaiting_follow_up, action::run_follow_up};
  if (send_again(e))
    return {state::awaiting_follow_up, action::resend};
  if (is_answer(e))
    return {state::delete_pending, action::error_queue_follow_up};
  switch (e) {
    case event::handler_committed:
      return {state::delete_pending, action::queue_delete};
    case event::handler_failed:
      return {state::awaiting_follow_up, action::retry_follow_up};
    case event::attempts_exhausted:
      return {state::delete_pending, action::error_queue_follow_up_with_response};
    default:  // attempt_abandoned: the follow-up runs again; put_tries_exhausted: not its PUT
      return stay(state::awaiting_follow_up);
  }
}

// DELETE until 204; 404 means the server does not know the id for us: nothing to delete.
lifecycle_step on_delete_pending(event e) {
  if (e == event::answer_no_content || e == event::answer_not_found)
    return {state::done, action::forget};
  if (is_answer(e))
    return {state::delete_pending, action::resend};
  return stay(state::delete_pending);
}

}  // namespace

answer_class classify(bool transport_failed, unsigned status, bool has_outcome,
                      std::string_view problem) {
  if (transport_failed)
    return answer_class::no_answer;
  if (has_outcome)
    return answer_class::stored_response;
  switch (status) {
    case 201:
      return answer_class::created;
    case 200:
      return answer_class::ok;
    case 204:
      return answer_class::no_content;
    case 401:
    case 403:
      return answer_class::credentials_refused;
    case 404:
      return answer_class::not_found;
    case 408:
    case 429:
      return answer_class::busy;
    case 409:
      return answer_class::conflict;
    case 410:
      return problem == "request-too-old" ? answer_class::too_old : answer_class::gone;
    case 413:
      return answer_class::too_large;
    case 422:
      return answer_class::unprocessable;
    default:
      return status >= 500 ? answer_class::server_error : answer_class::other;
  }
}

lifecycle_event answer_event(answer_class a) {
  return static_cast<lifecycle_event>(a);  // the answer events mirror answer_class, in order
}
static_assert(static_cast<int>(answer_class::other) == static_cast<int>(event::answer_other));

lifecycle_step on_event(invocation_state s, lifecycle_event e) {
  switch (s) {
    case state::put_sent:
      return on_put_sent(e);
    case state::staged:
      return on_staged(e);
    case state::post_pending:
      return on_post_pending(e);
    case state::restage_pending:
      return on_restage_pending(e);
    case state::awaiting_follow_up:
      return on_awaiting_follow_up(e);
    case state::delete_pending:
      return on_delete_pending(e);
    case state::done:
      return stay(state::done);
  }
  return stay(s);
}

std::optional<verb> request_of(invocation_state s) {
  switch (s) {
    case state::put_sent:
    case state::restage_pending:
      return verb::put;
    case state::post_pending:
      return verb::post;
    case state::awaiting_follow_up:
      return verb::get;
    case state::delete_pending:
      return verb::delete_;
    case state::staged:
    case state::done:
      return std::nullopt;
  }
  return std::nullopt;
}

lifecycle_step without_kept_request(lifecycle_step s) {
  if (s.action == action::restage)
    return {state::delete_pending, action::error_queue_follow_up};
  return s;
}

lifecycle_event handler_failure(int failed_before, int max_attempts) {
  return failed_before + 1 >= max_attempts ? event::attempts_exhausted : event::handler_failed;
}

}  // namespace exactly::client
