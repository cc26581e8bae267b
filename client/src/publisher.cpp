// Publishes committed steps: due POSTs (then their follow-ups) and DELETEs, and orphans' DELETEs.
#include "publisher.hpp"

#include "attempt_liveness.hpp"
#include "client_metrics.hpp"
#include "follow_up_now.hpp"
#include "http_answers.hpp"
#include "read_transaction.hpp"

#include <exactly/common/crash_point.hpp>

namespace exactly::client {
namespace {

using state = invocation_state;

// Queues DELETEs for journaled ids whose attempts ended without committing.
std::size_t recover_orphans(endpoint_core& core, std::int64_t now) {
  const auto entries = core.journal.older_than(core.name, now - core.opts.orphan_grace.count(), 64);
  if (entries.empty())
    return 0;
  // An id whose attempt has ended (on SQLite: holding the write lock, no handler is between its
  // PUT and its commit or rollback; on PostgreSQL: the attempt's advisory lock is free) and that
  // is not in the invocations table now belongs to an attempt that ended without committing.
  // Entries of attempts still running stay in the journal.
  const bool cleanup = on_event(state::put_sent, lifecycle_event::attempt_abandoned).action ==
                       lifecycle_action::queue_cleanup_delete;
  std::size_t orphans = 0;
  std::vector<journal_entry> ended;
  database_transaction tx(core.db);
  for (const journal_entry& e : entries) {
    if (!attempt_ended(core.db, e.request_id))
      continue;
    ended.push_back(e);
    if (cleanup && !core.invocations.contains(e.request_id)) {
      core.invocations.add_cleanup(e.request_id, core.name, e.url, now);
      ++orphans;
    }
  }
  tx.commit();
  core.journal.forget(ended);
  return orphans;
}

const char* method_of(state s) {
  return request_of(s) == verb::post ? "POST" : "DELETE";
}

struct due_step {
  invocation_row row;
  state from;
};

}  // namespace

std::size_t publish_due_steps(endpoint_core& core, int limit) {
  if (!core.opts.transport)
    return 0;
  const std::int64_t now = core.opts.clock();
  std::size_t done = recover_orphans(core, now);
  std::vector<due_step> due;
  {
    read_transaction read(core.db);
    for (const state s : {state::post_pending, state::delete_pending}) {
      for (invocation_row& row : core.invocations.due(s, now, limit)) {
        if (row.endpoint == core.name)
          due.push_back({std::move(row), s});
      }
    }
  }
  if (due.empty())
    return done;
  // Every due POST and DELETE goes out at once; their outcomes then commit together, in one
  // transaction (one fsync for the batch). Each step moves only from the state it was read in,
  // so a step another publisher completed meanwhile is skipped, not done twice.
  std::vector<http_call> calls;
  for (const due_step& d : due)
    calls.push_back({method_of(d.from), d.row.url, "", ""});
  const std::vector<http_result> answers = core.opts.transport->send_all(calls);
  std::vector<lifecycle_step> steps;
  for (std::size_t i = 0; i < due.size(); ++i) {
    note_request(core.metrics.get(), calls[i].method, answers[i]);
    steps.push_back(on_event(due[i].from, answer_event(answers[i])));
    if (steps.back().action == lifecycle_action::queue_follow_up)
      crash_point("client.after_post_before_follow_up");
    else if (steps.back().action == lifecycle_action::forget)
      crash_point("client.after_delete_before_done");
  }
  // Follow-ups run now, in this transaction, each handler waiting for its own PUTs.
  attempt_puts puts(core, put_wait::in_handler, now);
  // Only what a crash must not take back is flushed: a lost DELETE completion or retry record
  // repeats an idempotent DELETE (or sends one sooner), nothing more.
  bool flush = false;
  database_transaction tx(core.db);
  for (std::size_t i = 0; i < due.size(); ++i) {
    const invocation_row& row = due[i].row;
    const state from = due[i].from;
    switch (steps[i].action) {
      case lifecycle_action::forget:
        core.invocations.remove(row.request_id);
        ++done;
        break;
      case lifecycle_action::queue_follow_up:
        // The follow-up runs (or is queued) atomically with the POST's completion.
        if (core.invocations.move_if_in(row.request_id, from, steps[i].next, now)) {
          if (const auto until = available_until(answers[i]))
            core.invocations.record_response_until(row.request_id, *until);
          if (core.opts.follow_up_with_post_answer) {
            puts.begin_attempt(i);
            run_follow_up_now(core, puts, row, answers[i], now);
          } else {
            core.queues.enqueue(row.endpoint, row.follow_up, now);
          }
          flush = true;
          ++done;
        }
        break;
      case lifecycle_action::error_queue_follow_up:
        // Never re-invoked under a new id: the follow-up goes to the error queue with the
        // problem and the id is DELETEd. A stale copy of a step another publisher completed
        // moves nothing and raises no false fault.
        if (core.invocations.move_if_in(row.request_id, from, steps[i].next, now)) {
          core.queues.add_error(row.endpoint, row.follow_up, row.attempts + 1,
                                describe_answer(method_of(from), answers[i]), now);
          flush = true;
          ++done;
        }
        break;
      case lifecycle_action::resend:
        core.invocations.retry_later(row.request_id, core.backoff_until(row.attempts, now),
                                     describe_answer(method_of(from), answers[i]));
        break;
      default:  // nothing else follows a POST or DELETE answer
        break;
    }
  }
  if (flush)
    tx.commit();
  else
    tx.commit_unflushed();
  puts.forget();  // the follow-ups' PUTs belong to their invocation or cleanup rows now
  return done;
}

}  // namespace exactly::client
