// Runs a follow-up in the POST answer's transaction (see follow_up_now.hpp).
#include "follow_up_now.hpp"

#include "handler_scope.hpp"
#include "http_answers.hpp"

#include <exactly/client/endpoint.hpp>
#include <exactly/common/crash_point.hpp>

namespace exactly::client {
namespace {

using state = invocation_state;

// Runs the handler in a savepoint; "" when it committed, else why it failed.
std::string attempt(endpoint_core& core, attempt_puts& puts, later_releases& releases,
                    const invocation_row& row, const http_result& response, std::int64_t now) {
  const auto h = core.handlers.find(row.follow_up.type);
  if (h == core.handlers.end())
    return "no handler for message type " + row.follow_up.type;
  try {
    database_transaction tx(core.db);
    detail::handler_scope scope{core, puts, now, row.follow_up, &response};
    handler_context ctx(scope);
    h->second(ctx);
    detail::expect_transaction_open(core.db);
    const lifecycle_step step =
        on_event(state::awaiting_follow_up, lifecycle_event::handler_committed);
    core.invocations.move_if_in_deferred(row.request_id, state::awaiting_follow_up, step.next, now);
    releases.release(tx);
    return "";
  } catch (const storage_error& e) {
    if (!detail::fails_the_attempt_alone(core.db, e))
      throw;  // nothing of the batch commits
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

std::string_view run_follow_up_now(endpoint_core& core, attempt_puts& puts,
                                   later_releases& releases, const invocation_row& row,
                                   const http_result& response, std::int64_t now) {
  const std::string error = attempt(core, puts, releases, row, response, now);
  if (error.empty()) {
    crash_point("client.after_follow_up_before_commit");
    return "committed";
  }
  const bool handled = core.handlers.contains(row.follow_up.type);
  const lifecycle_event failure =
      handled ? handler_failure(0, core.opts.max_attempts) : lifecycle_event::attempts_exhausted;
  puts.end_failed_attempt(failure);
  message follow_up = row.follow_up;
  follow_up.headers = keep_response(std::move(follow_up.headers), response);
  const lifecycle_step step = on_event(state::awaiting_follow_up, failure);
  if (step.action == lifecycle_action::error_queue_follow_up_with_response) {
    core.queues.add_error(row.endpoint, follow_up, 1, error, now);
    core.invocations.move_if_in_deferred(row.request_id, state::awaiting_follow_up, step.next, now);
  } else {
    core.queues.enqueue_failed(row.endpoint, follow_up, error, core.backoff_until(0, now), now);
  }
  return step.action == lifecycle_action::retry_follow_up ? "failed" : "error_queued";
}

}  // namespace exactly::client
