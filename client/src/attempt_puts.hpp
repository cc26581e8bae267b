#pragma once
// The PUTs of a batch's handler attempts: journaled before they are sent, then sent and awaited
// either in the handler (put_wait::in_handler) or all together once the batch's handlers have run,
// before it commits (put_wait::before_commit: journaled in one commit, and a failed attempt's PUTs
// never go out; put_wait::never: as that, but their answers are only taken after the commit), and
// given a cleanup DELETE when their attempt does not commit.

#include "attempt_journal.hpp"
#include "endpoint_core.hpp"
#include "invocation_lifecycle.hpp"

#include <cstddef>
#include <cstdint>
#include <future>
#include <optional>
#include <string_view>
#include <vector>

namespace exactly::client {

class attempt_puts {
 public:
  attempt_puts(endpoint_core& core, put_wait wait, std::int64_t now_ms);

  // The handler at `handler` (index in the batch) starts an attempt.
  void begin_attempt(std::size_t handler);
  // With put_wait::in_handler: journals `put` (committed before the PUT goes out), sends it and
  // returns once it is staged, with until when the server keeps it (its answer's
  // Exactly-Once-Retention, nullopt when absent), or queues the id's DELETE in the handler's
  // transaction and throws. Else: keeps it for staged_for_commit() and returns nullopt at once.
  std::optional<std::int64_t> send(const journal_entry& put, std::string_view content_type,
                                   std::string_view body);
  // The attempt in progress ended with `failure` (handler_failed or attempts_exhausted): each id it
  // PUT gets a DELETE, in the caller's transaction; unless in the handler, its PUTs are dropped
  // unsent instead.
  void end_failed_attempt(lifecycle_event failure);
  // Before the batch's commit, in its transaction. put_wait::before_commit: journals the kept PUTs
  // of committed handlers whose invocation rows stand in one commit, sends them all and waits for
  // them; true when each is staged, whose retention it then records in its invocation row.
  // put_wait::in_handler: each id PUT without an invocation or cleanup row now gets a DELETE;
  // always true. put_wait::never: journals and sends them as before_commit, and returns true at
  // once.
  bool staged_for_commit();
  // put_wait::never, once the batch has committed: keeps the answers of the PUTs it sent in
  // endpoint_core::unawaited_puts for take_unawaited_answers().
  void observe_unawaited();
  // The batch does not commit: each id it PUT gets a DELETE, in the caller's transaction.
  void abandon_batch();
  // The batch ended: its ids belong to invocation or cleanup rows now, not to the journal.
  void forget();

 private:
  struct awaited_put {
    std::string request_id;
    http_call call;
    std::future<http_result> answer;
    std::size_t handler;
  };
  struct put_result {
    http_result answer;
    lifecycle_step step;
  };
  // Sends `call` again while the lifecycle asks for it, at most max_put_tries in all; `first` is
  // the answer of a try already made.
  put_result send_until_answered(const http_call& call, std::optional<http_result> first);
  // put_wait::before_commit: drops the kept PUTs whose invocation rows are gone, journals the
  // others in one commit, then starts them.
  void launch();
  // put_wait::in_handler: queues a DELETE of each id PUT whose invocation row is gone (its handler
  // rolled back a savepoint of its own around invoke_http, then committed).
  void delete_unrecorded();
  void queue_deletes(const std::vector<journal_entry>& puts, invocation_state state,
                     lifecycle_event e);

  endpoint_core& core_;
  put_wait wait_;
  std::int64_t now_ms_;
  std::size_t handler_ = 0;
  std::vector<journal_entry> attempt_;  // ids PUT by the attempt in progress
  std::vector<journal_entry> batch_;    // ids journaled and PUT by the batch's attempts
  std::vector<awaited_put> awaited_;    // PUTs sent with the batch (all but in the handler)
};

// put_wait::never, at the start of each turn of process_due(): takes the answers in
// core.unawaited_puts that have come, and a transport's deferred ones (waiting for them: its
// start() must have sent the request), then waits for the oldest of those still unanswered beyond
// endpoint_options::max_unanswered_puts; counted, and a refusal logged. They change nothing.
// Never throws.
void take_unawaited_answers(endpoint_core& core);

}  // namespace exactly::client
