// Publishes committed steps: due POSTs (then their follow-ups), re-PUTs and DELETEs, and orphans'
// DELETEs.
#include "publisher.hpp"

#include "client_metrics.hpp"
#include "follow_up_now.hpp"
#include "http_answers.hpp"
#include "orphan_recovery.hpp"
#include "publish_claims.hpp"
#include "read_transaction.hpp"

#include <exactly/common/crash_point.hpp>
#include <exactly/common/request_id.hpp>

#include <algorithm>
#include <optional>

namespace exactly::client {
namespace {

using state = invocation_state;

const char* method_of(state s) {
  if (request_of(s) == verb::put)
    return "PUT";
  return request_of(s) == verb::post ? "POST" : "DELETE";
}

struct due_step {
  invocation_row row;
  state from;
  // Claimed by the turn's transaction (PostgreSQL): locked in `from` since it was read, so no
  // other publisher can have moved it.
  bool claimed = false;
};

// Moves `d`'s row on from the state it was read in to `to`, due at `due_ms`; whether it moved
// (not: a stale copy of a step another publisher completed). A claimed row cannot have moved
// since it was read: its move goes with the transaction's next round trip.
bool move_on(endpoint_core& core, const due_step& d, state to, std::int64_t due_ms) {
  if (!d.claimed)
    return core.invocations.move_if_in(d.row.request_id, d.from, to, due_ms);
  core.invocations.move_if_in_deferred(d.row.request_id, d.from, to, due_ms);
  return true;
}

// The request of a due step: a re-PUT sends the kept body and Content-Type under the same id.
http_call call_of(const due_step& d) {
  if (d.from == state::restage_pending)
    return {"PUT", d.row.url, d.row.content_type, d.row.body.value_or("")};
  return {method_of(d.from), d.row.url, "", ""};
}

// The lifecycle's step for `answer` to `d`'s request. A row that keeps no body (committed before
// rows kept them) cannot be staged again: its 404 stays a protocol fault.
lifecycle_step step_of(const due_step& d, const http_result& answer) {
  const lifecycle_step s = on_event(d.from, answer_event(answer));
  return d.row.body ? s : without_kept_request(s);
}

// When a restage's re-PUT goes out: the later of one backoff and a tenth of its id's age (up to
// retry_cap), so that a re-PUT the server refuses for good (a PUT never awaited,
// put_wait::never) is tried about two hundred times in an hour (the default retry_cap), not once
// every backoff.
std::int64_t restage_due(endpoint_core& core, const invocation_row& row, std::int64_t now) {
  const auto id = request_id::parse(row.request_id);
  const std::int64_t age = id ? std::max<std::int64_t>(0, now - id->timestamp_ms()) : 0;
  return std::max(core.backoff_until(0, now),
                  now + std::min<std::int64_t>(age / 10, core.opts.retry_cap.count()));
}

// Carries out a restage (POST answered 404: PUT again) or a post_again (the re-PUT answered:
// POST again), in the caller's transaction; whether the row moved.
bool move_to_stage_again(endpoint_core& core, const due_step& d, const lifecycle_step& step,
                         const http_result& answer, std::int64_t now) {
  if (!move_on(core, d, step.next, now))
    return false;
  if (step.action == lifecycle_action::restage) {
    // The 404 stays visible as the row's last error; the re-PUT goes out after a pause
    // (restage_due), so a server that keeps losing the row is not sent PUT after POST at once.
    core.invocations.retry_later(d.row.request_id, restage_due(core, d.row, now),
                                 describe_answer("POST", answer));
    return true;
  }
  const lifecycle_event e = answer_event(answer);
  if (e != lifecycle_event::answer_created && e != lifecycle_event::answer_ok) {
    // Not staged by this re-PUT (a refusal, a 410 of an id that was, no answer): the POST tells;
    // the answer stays visible as the row's last error.
    core.invocations.retry_later(d.row.request_id, now, describe_answer("PUT", answer));
  } else if (const auto until = available_until(answer)) {  // staged again: until when it is kept
    core.invocations.record_staged_until(d.row.request_id, *until);
  }
  return true;
}

// The states whose steps a publisher sends.
const std::vector<state> published_states{state::post_pending, state::restage_pending,
                                          state::delete_pending};

// Appends `core`'s steps due at `now` (each state's up to `limit`), read outside the write lock.
void read_due_steps(endpoint_core& core, std::int64_t now, int limit, std::vector<due_step>& due) {
  for (const state s : published_states) {
    for (invocation_row& row : core.invocations.due(s, now, limit)) {
      if (row.endpoint == core.name)
        due.push_back({std::move(row), s});
    }
  }
}

// PostgreSQL: `core`'s steps due at `now` (each state's up to `limit`), claimed in the caller's
// transaction.
std::vector<due_step> claim_due_steps(endpoint_core& core, std::int64_t now, int limit) {
  std::vector<due_step> due;
  for (auto& [from, row] : core.invocations.claim_due(core.name, published_states, now, limit))
    due.push_back({std::move(row), from, true});
  return due;
}

// Releases a turn's claims among the runtime's publishers when the turn ends, however it ends.
struct claims_release {
  publish_claims* claims;
  std::set<std::string> ids;
  ~claims_release() {
    if (claims && !ids.empty())
      claims->release(ids);
  }
};

// SQLite: `core`'s due steps that no other publisher of the runtime is sending now, claimed in
// core.claims (for the caller's claims_release). A read that another turn ended during may show
// steps that turn completed: read again, three times at most, then leave the steps to the
// publishers that are busy with them.
std::set<std::string> claim_due_steps_in_process(endpoint_core& core, std::int64_t now, int limit,
                                                 std::vector<due_step>& due) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::uint64_t mark = core.claims ? core.claims->mark() : 0;
    due.clear();
    {
      read_transaction read(core.db);
      read_due_steps(core, now, limit, due);
    }
    if (!core.claims)
      return {};
    std::vector<std::string> ids;
    for (const due_step& d : due)
      ids.push_back(d.row.request_id);
    if (const auto mine = core.claims->claim(mark, ids)) {
      std::erase_if(due, [&](const due_step& d) { return !mine->contains(d.row.request_id); });
      return *mine;
    }
  }
  due.clear();
  return {};
}

// One publishing turn of `core`'s due steps; how many finished. `follow_ups_now`: a POST's
// stored response runs its follow-up in the turn (else the follow-up is queued); `ran_follow_ups`
// is set once one has run.
std::size_t publish_turn(endpoint_core& core, int limit, std::int64_t now, bool follow_ups_now,
                         bool& ran_follow_ups) {
  std::size_t done = 0;
  std::vector<due_step> due;
  // On PostgreSQL the steps are claimed as they are read, in the transaction that records their
  // outcomes: a publisher sharing the table passes over the steps another one sends now and
  // sends the next due ones, not the same ones twice. On SQLite they are read outside the write
  // lock, which the requests must not hold, and claimed among the runtime's publishers.
  claims_release claimed{core.claims.get(), {}};  // declared first: released after the commit
  std::optional<database_transaction> tx;
  if (core.db.kind() == engine::postgres) {
    tx.emplace(core.db);
    due = claim_due_steps(core, now, limit);
  } else {
    claimed.ids = claim_due_steps_in_process(core, now, limit, due);
  }
  if (due.empty())
    return done;
  // Every due POST, re-PUT and DELETE goes out at once; their outcomes then commit together, in one
  // transaction (one fsync for the batch). Each step moves only from the state it was read in,
  // so a step another publisher completed meanwhile (SQLite) is skipped, not done twice.
  std::vector<http_call> calls;
  for (const due_step& d : due)
    calls.push_back(call_of(d));
  const std::vector<http_result> answers = core.opts.transport->send_all(calls);
  std::vector<lifecycle_step> steps;
  for (std::size_t i = 0; i < due.size(); ++i) {
    note_request(core.metrics.get(), calls[i].method, answers[i]);
    steps.push_back(step_of(due[i], answers[i]));
    if (steps.back().action == lifecycle_action::queue_follow_up)
      crash_point("client.after_post_before_follow_up");
    else if (steps.back().action == lifecycle_action::forget)
      crash_point("client.after_delete_before_done");
  }
  // Follow-ups run now, in this transaction, each handler waiting for its own PUTs.
  attempt_puts puts(core, put_wait::in_handler, now);
  later_releases releases;
  std::vector<std::string_view> outcomes;  // of the follow-ups' attempts, for metrics
  // Only what a crash must not take back is flushed (a POST's answer with its follow-up, an error
  // queue entry): a lost DELETE completion, re-PUT move or retry record only repeats an
  // idempotent DELETE, PUT or POST, or sends one sooner.
  const bool flush = std::any_of(steps.begin(), steps.end(), [](const lifecycle_step& s) {
    return s.action == lifecycle_action::queue_follow_up ||
           s.action == lifecycle_action::error_queue_follow_up;
  });
  const durability commit_durability = flush ? durability::flushed : durability::unflushed;
  if (tx)
    tx->set_durability(commit_durability);
  else
    tx.emplace(core.db, commit_durability);
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
        if (move_on(core, due[i], steps[i].next, now)) {
          if (const auto until = available_until(answers[i]))
            core.invocations.record_response_until(row.request_id, *until);
          if (follow_ups_now) {
            ran_follow_ups = true;
            puts.begin_attempt(i);
            outcomes.push_back(run_follow_up_now(core, puts, releases, row, answers[i], now));
          } else {
            core.queues.enqueue(row.endpoint, row.follow_up, now);
          }
          ++done;
        }
        break;
      case lifecycle_action::error_queue_follow_up:
        // Never re-invoked under a new id: the follow-up goes to the error queue with the
        // problem and the id is DELETEd. A stale copy of a step another publisher completed
        // moves nothing and raises no false fault.
        if (move_on(core, due[i], steps[i].next, now)) {
          core.queues.add_error(row.endpoint, row.follow_up, row.attempts + 1,
                                describe_answer(method_of(from), answers[i]), now);
          ++done;
        }
        break;
      case lifecycle_action::restage:
      case lifecycle_action::post_again:
        if (move_to_stage_again(core, due[i], steps[i], answers[i], now))
          ++done;
        break;
      case lifecycle_action::resend:
        core.invocations.retry_later(row.request_id, core.backoff_until(row.attempts, now),
                                     describe_answer(method_of(from), answers[i]));
        break;
      default:  // nothing else follows a POST, re-PUT or DELETE answer
        break;
    }
  }
  puts.staged_for_commit();  // in the handler: only queues the DELETEs of unrecorded ids
  releases.throw_if_failed();
  tx->commit();
  puts.forget();  // the follow-ups' PUTs belong to their invocation or cleanup rows now
  if (core.metrics) {
    for (const std::string_view outcome : outcomes)
      core.metrics->handler_attempt(core.name, outcome);
  }
  return done;
}

}  // namespace

std::size_t publish_due_steps(endpoint_core& core, int limit) {
  if (!core.opts.transport)
    return 0;
  const std::int64_t now = core.opts.clock();
  const std::size_t orphans = recover_orphans(core, now);
  bool ran_follow_ups = false;
  try {
    return orphans +
           publish_turn(core, limit, now, core.opts.follow_up_with_post_answer, ran_follow_ups);
  } catch (const storage_error& e) {
    // Storage trouble fails the turn as it is. A refusal in a turn that ran follow-ups (a
    // statement that ended the transaction, a constraint checked at COMMIT, a write refused after
    // a follow-up's savepoint was released) would fail it every time: the turn runs once more
    // with its follow-ups queued, where a batch of their own charges the one refused. Its
    // requests are sent again: POSTs are answered with their stored responses.
    if (e.storage_failure() || !ran_follow_ups)
      throw;
  }
  return orphans + publish_turn(core, limit, now, false, ran_follow_ups);
}

}  // namespace exactly::client
