// The printable names of the lifecycle's states, events and actions, for logs, metrics and tests.
#include "invocation_lifecycle.hpp"

namespace exactly::client {
namespace {

using state = invocation_state;
using event = lifecycle_event;
using action = lifecycle_action;

}  // namespace

std::string_view name_of(invocation_state s) {
  switch (s) {
    case state::put_sent:
      return "put_sent";
    case state::staged:
      return "staged";
    case state::post_pending:
      return "post_pending";
    case state::restage_pending:
      return "restage_pending";
    case state::awaiting_follow_up:
      return "awaiting_follow_up";
    case state::delete_pending:
      return "delete_pending";
    case state::done:
      return "done";
  }
  return "?";
}

std::string_view name_of(lifecycle_event e) {
  switch (e) {
    case event::answer_no_answer:
      return "no answer";
    case event::answer_stored_response:
      return "stored response";
    case event::answer_created:
      return "201";
    case event::answer_ok:
      return "200";
    case event::answer_no_content:
      return "204";
    case event::answer_credentials_refused:
      return "401/403";
    case event::answer_not_found:
      return "404";
    case event::answer_conflict:
      return "409";
    case event::answer_gone:
      return "410";
    case event::answer_too_old:
      return "410 request-too-old";
    case event::answer_too_large:
      return "413";
    case event::answer_unprocessable:
      return "422";
    case event::answer_busy:
      return "408/429";
    case event::answer_server_error:
      return "5xx without outcome";
    case event::answer_other:
      return "other status";
    case event::put_tries_exhausted:
      return "put_tries_exhausted";
    case event::handler_committed:
      return "handler_committed";
    case event::handler_failed:
      return "handler_failed";
    case event::attempts_exhausted:
      return "attempts_exhausted";
    case event::attempt_abandoned:
      return "attempt_abandoned";
    case event::handler_committed_unanswered:
      return "handler_committed_unanswered";
  }
  return "?";
}

std::string_view name_of(lifecycle_action a) {
  switch (a) {
    case action::none:
      return "none";
    case action::resend:
      return "resend";
    case action::commit_when_staged:
      return "commit_when_staged";
    case action::fail_handler:
      return "fail_handler";
    case action::queue_cleanup_delete:
      return "queue_cleanup_delete";
    case action::queue_post:
      return "queue_post";
    case action::queue_follow_up:
      return "queue_follow_up";
    case action::run_follow_up:
      return "run_follow_up";
    case action::retry_follow_up:
      return "retry_follow_up";
    case action::queue_delete:
      return "queue_delete";
    case action::error_queue_follow_up:
      return "error_queue_follow_up";
    case action::error_queue_follow_up_with_response:
      return "error_queue_follow_up_with_response";
    case action::forget:
      return "forget";
    case action::restage:
      return "restage";
    case action::post_again:
      return "post_again";
  }
  return "?";
}

}  // namespace exactly::client
