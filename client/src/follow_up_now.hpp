#pragma once
// A follow-up run with the POST's answer in hand, in the transaction that records that answer:
// one local commit for both, and no GET.

#include "attempt_puts.hpp"
#include "endpoint_core.hpp"
#include "invocation_store.hpp"
#include "later_releases.hpp"

#include <cstdint>
#include <string_view>

namespace exactly::client {

// Runs the follow-up of `row` (moved to awaiting_follow_up in the caller's open transaction) with
// `response`, the stored response its POST answered, in a savepoint, as its first attempt; its
// PUTs go through `puts` (put_wait::in_handler; begin_attempt() called by the caller). Committed,
// the row waits for its DELETE. Failed, its PUTs get DELETEs and the follow-up is queued with the
// response kept, one attempt counted, or error-queued with it (and the id DELETEd) when that was
// its last attempt. All of it in the caller's transaction; storage errors propagate. A committed
// handler's savepoint is released through `releases` (the caller calls throw_if_failed() before
// its commit). Returns the attempt's outcome for the metrics, counted once the caller committed:
// "committed", "failed" or "error_queued".
std::string_view run_follow_up_now(endpoint_core& core, attempt_puts& puts,
                                   later_releases& releases, const invocation_row& row,
                                   const http_result& response, std::int64_t now);

}  // namespace exactly::client
