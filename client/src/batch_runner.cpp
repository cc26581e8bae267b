// Runs a batch of due messages in one transaction: GETs first, handlers in savepoints, PUTs
// awaited at commit (but put_wait::never), the in_handler fallback, a refused batch one by one.
#include "batch_runner.hpp"

#include "attempt_puts.hpp"
#include "client_metrics.hpp"
#include "handler_scope.hpp"
#include "http_answers.hpp"
#include "later_releases.hpp"
#include "read_transaction.hpp"

#include <exactly/common/crash_point.hpp>

#include <algorithm>
#include <exception>
#include <optional>

namespace exactly::client {
namespace {

using state = invocation_state;

// A message of the batch as its handler will see it.
struct prepared_message {
  std::string request_id;  // the interaction of a follow-up; "" for any other message
  std::optional<http_result> response;
  // What the GET's answer asks (run_follow_up when there was no GET).
  lifecycle_step step{state::awaiting_follow_up, lifecycle_action::run_follow_up};
};

// Follow-ups first fetch their stored responses, all at once (on SQLite outside any transaction,
// on PostgreSQL with the batch's claim held). One requeued from the error queue with its response
// kept runs with that response, without a GET.
std::vector<prepared_message> prepare(endpoint_core& core,
                                      const std::vector<queued_message>& batch) {
  std::vector<prepared_message> out(batch.size());
  std::vector<http_call> calls;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const nlohmann::json& headers = batch[i].msg.headers;
    const auto rid = headers.find(request_id_header);
    if (rid == headers.end())
      continue;
    out[i].request_id = rid->get<std::string>();
    out[i].response = kept_response(headers);
    if (!out[i].response && core.opts.transport) {
      calls.push_back({"GET", headers.at(url_header), "", ""});
      which.push_back(i);
    }
  }
  if (calls.empty())
    return out;
  std::vector<http_result> answers = core.opts.transport->send_all(calls);
  for (std::size_t k = 0; k < which.size(); ++k) {
    note_request(core.metrics.get(), "GET", answers[k]);
    prepared_message& p = out[which[k]];
    p.step = on_event(state::awaiting_follow_up, answer_event(answers[k]));
    if (p.step.action == lifecycle_action::run_follow_up)
      crash_point("client.after_get_before_commit");
    p.response = std::move(answers[k]);
  }
  return out;
}

// Carries out what a GET that brought no stored response asks: GET again later, or the follow-up
// goes to the error queue and its id to a DELETE. True when the message left the queue.
bool carry_out_get_answer(endpoint_core& core, const queued_message& q, const prepared_message& p,
                          std::int64_t now) {
  const std::string error = describe_answer("GET", *p.response);
  if (p.step.action == lifecycle_action::error_queue_follow_up) {
    core.queues.move_to_errors(q.seq, error, now);
    core.invocations.move_if_in_deferred(p.request_id, state::awaiting_follow_up, p.step.next, now);
    return true;
  }
  core.queues.retry_later(q.seq, core.backoff_until(q.attempts, now), error);
  return false;
}

// Carries out a failed handler attempt (`failure`: handler_failed or attempts_exhausted): the
// message is tried again later or goes to the error queue. A follow-up that goes there keeps the
// response it was given and hands its id to a DELETE.
void carry_out_failure(endpoint_core& core, const queued_message& q, const prepared_message& p,
                       lifecycle_event failure, const std::string& error, std::int64_t now) {
  if (p.request_id.empty()) {
    if (failure == lifecycle_event::attempts_exhausted)
      core.queues.move_to_errors(q.seq, error, now);
    else
      core.queues.retry_later(q.seq, core.backoff_until(q.attempts, now), error);
    return;
  }
  const lifecycle_step step = on_event(state::awaiting_follow_up, failure);
  if (step.action == lifecycle_action::error_queue_follow_up_with_response) {
    core.queues.move_to_errors(
        q.seq, error, now, p.response ? keep_response(q.msg.headers, *p.response) : q.msg.headers);
    core.invocations.move_if_in_deferred(p.request_id, state::awaiting_follow_up, step.next, now);
  } else {
    core.queues.retry_later(q.seq, core.backoff_until(q.attempts, now), error);
  }
}

// Runs `batch` in one transaction: `group` when the batch was claimed as it was read in it,
// else one of its own; false when, with put_wait::before_commit, a committed handler's PUT was
// not staged (then nothing of it committed and every id it PUT gets a DELETE).
bool run_batch(endpoint_core& core, const std::vector<queued_message>& batch,
               const std::vector<prepared_message>& prepared, std::int64_t now, put_wait wait,
               std::size_t& done, std::optional<database_transaction>& group) {
  // One commit (one fsync) for the batch; each handler in a savepoint, rolled back alone.
  std::vector<std::int64_t> seqs;
  for (const queued_message& q : batch)
    seqs.push_back(q.seq);
  std::set<std::int64_t> claimed(seqs.begin(), seqs.end());
  if (!group) {
    // Another worker or process sharing the queue may have taken a message since the batch was
    // read (handled it, or failed it and made it due later), or (PostgreSQL) holds it in its
    // open transaction now: skipped. Claimed in the batch's transaction, outside the handlers'
    // savepoints, so a failed attempt keeps the claim.
    group.emplace(core.db);
    claimed = core.queues.claim_all(seqs, now);
  }
  attempt_puts puts(core, wait, now);
  later_releases releases;
  std::vector<bool> committed(batch.size(), false);
  std::vector<std::string_view> outcomes(batch.size());  // of handler attempts, for metrics
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const queued_message& q = batch[i];
    const prepared_message& p = prepared[i];
    if (!claimed.contains(q.seq))
      continue;
    if (p.step.action != lifecycle_action::run_follow_up) {
      done += carry_out_get_answer(core, q, p, now) ? 1 : 0;
      continue;
    }
    std::string error;
    std::optional<lifecycle_event> failure;
    puts.begin_attempt(i);
    {
      database_transaction tx(core.db);
      const auto h = core.handlers.find(q.msg.type);
      if (h == core.handlers.end()) {
        error = "no handler for message type " + q.msg.type;
        failure = lifecycle_event::attempts_exhausted;  // no attempt can succeed
      } else {
        try {
          detail::handler_scope scope{core, puts, now, q.msg, p.response ? &*p.response : nullptr};
          handler_context ctx(scope);
          h->second(ctx);
          detail::expect_transaction_open(core.db);
          if (!p.request_id.empty()) {
            const lifecycle_step step =
                on_event(state::awaiting_follow_up, lifecycle_event::handler_committed);
            core.invocations.move_if_in_deferred(p.request_id, state::awaiting_follow_up, step.next,
                                                 now);
          }
          core.queues.consume(q.seq);
          releases.release(tx);
          committed[i] = true;
          outcomes[i] = "committed";
          ++done;
          continue;
        } catch (const storage_error& e) {
          if (!detail::fails_the_attempt_alone(core.db, e))
            throw;  // nothing of the batch commits
          error = e.what();
          failure = handler_failure(q.attempts, core.opts.max_attempts);
        } catch (const std::exception& e) {
          error = e.what();
          failure = handler_failure(q.attempts, core.opts.max_attempts);
        }
      }
    }  // an uncommitted handler's writes are rolled back here
    // Ids PUT by the failed attempt get a durable DELETE, committed with the failure.
    puts.end_failed_attempt(*failure);
    carry_out_failure(core, q, p, *failure, error, now);
    outcomes[i] = *failure == lifecycle_event::attempts_exhausted ? "error_queued" : "failed";
    if (*failure == lifecycle_event::attempts_exhausted)
      ++done;
  }
  releases.throw_if_failed();  // before any PUT of the batch goes out
  if (!puts.staged_for_commit()) {
    group.reset();  // nothing of the batch commits; every id it PUT gets a durable DELETE
    database_transaction tx(core.db);
    puts.abandon_batch();
    tx.commit();
    puts.forget();
    return false;
  }
  releases.throw_if_failed();
  group->commit();
  if (core.metrics) {
    for (const std::string_view outcome : outcomes) {
      if (!outcome.empty())
        core.metrics->handler_attempt(core.name, outcome);
    }
  }
  if (std::find(committed.begin(), committed.end(), true) != committed.end())
    crash_point("client.after_commit_before_post_or_delete");
  puts.forget();  // their invocation or cleanup rows own them now
  puts.observe_unawaited();
  return true;
}

// Charges `q`'s refused batch of one as its attempt, in a transaction: whether it left the queue.
bool charge_refusal(endpoint_core& core, const queued_message& q, const prepared_message& p,
                    const storage_error& refusal, std::int64_t now) {
  database_transaction tx(core.db);
  if (core.queues.claim_all({q.seq}, now).empty())
    return false;  // another worker took it meanwhile
  const std::string error = std::string("the database refused the transaction: ") + refusal.what();
  if (p.step.action != lifecycle_action::run_follow_up) {
    // No handler ran: its GET's answer was being recorded. GET again later, as after no answer.
    core.queues.retry_later(q.seq, core.backoff_until(q.attempts, now), error);
    tx.commit();
    return false;
  }
  const lifecycle_event failure = handler_failure(q.attempts, core.opts.max_attempts);
  carry_out_failure(core, q, p, failure, error, now);
  tx.commit();
  const bool exhausted = failure == lifecycle_event::attempts_exhausted;
  if (core.metrics)
    core.metrics->handler_attempt(core.name, exhausted ? "error_queued" : "failed");
  return exhausted;
}

// Runs each message of a batch that a refusal failed as a batch of its own, so the others commit
// and the one that fails alone is charged an attempt. A charge refused too is thrown once the
// others have run; storage trouble at once. Either way the messages committed alone stay so.
std::size_t run_each_alone(endpoint_core& core, const std::vector<queued_message>& batch,
                           const std::vector<prepared_message>& prepared, std::int64_t now) {
  std::size_t done = 0;
  std::exception_ptr charge_failed;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::optional<database_transaction> alone;
    std::size_t left = 0;  // counted once the batch of one committed
    try {
      run_batch(core, {batch[i]}, {prepared[i]}, now, put_wait::in_handler, left, alone);
      done += left;
    } catch (const storage_error& e) {
      if (e.storage_failure())
        throw;
      alone.reset();
      try {
        done += charge_refusal(core, batch[i], prepared[i], e, now) ? 1 : 0;
      } catch (const storage_error& charge) {
        if (charge.storage_failure())
          throw;
        if (!charge_failed)
          charge_failed = std::current_exception();
      }
    }
  }
  if (charge_failed)
    std::rethrow_exception(charge_failed);
  return done;
}

}  // namespace

std::size_t run_due_messages(endpoint_core& core, int limit) {
  const std::int64_t now = core.opts.clock();
  std::vector<queued_message> batch;
  std::optional<database_transaction> group;
  if (core.db.kind() == engine::postgres) {
    // Claimed as it is read, in the batch's transaction: a worker sharing the queue passes over
    // the messages another one handles now and takes the next due ones. The GETs of follow-ups
    // (rare: only after a POST's answer was lost) are then made with the claim held.
    group.emplace(core.db);
    batch = core.queues.claim_due(core.name, now, limit);
  } else {
    // Read outside the write lock, which the GETs must not hold; claimed in the batch.
    read_transaction read(core.db);
    batch = core.queues.due(core.name, now, limit);
  }
  if (batch.empty())
    return 0;
  const std::vector<prepared_message> prepared = prepare(core, batch);
  // A batch of one message waits for its PUTs in the handler, unless they are never awaited.
  const bool alone = batch.size() == 1 && core.opts.wait_for_put != put_wait::never;
  const put_wait wait = alone ? put_wait::in_handler : core.opts.wait_for_put;
  std::size_t done = 0;
  try {
    if (!run_batch(core, batch, prepared, now, wait, done, group)) {
      done = 0;  // rolled back: once more, each handler waiting for its PUTs, claimed anew
      group.reset();
      run_batch(core, batch, prepared, now, put_wait::in_handler, done, group);
    }
    return done;
  } catch (const storage_error& e) {
    // Storage trouble fails the batch as it is: the same batch may commit later. A refusal (a
    // statement that ended the transaction, a constraint checked at COMMIT, a write refused after
    // its savepoint was released) would fail it every time: each message runs alone instead.
    if (e.storage_failure())
      throw;
    group.reset();
    if (batch.size() > 1)
      return run_each_alone(core, batch, prepared, now);
    return charge_refusal(core, batch.front(), prepared.front(), e, now) ? 1 : 0;
  }
}

}  // namespace exactly::client
