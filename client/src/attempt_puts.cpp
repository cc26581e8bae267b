// The PUTs of a batch's handler attempts: journaled, sent, awaited, and cleaned up.
#include "attempt_puts.hpp"

#include "attempt_liveness.hpp"
#include "client_metrics.hpp"
#include "http_answers.hpp"

#include <exactly/common/backoff.hpp>
#include <exactly/common/crash_point.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <thread>

namespace exactly::client {
namespace {

// An unanswered or busy-answered PUT is sent again, quickly, before the attempt fails.
constexpr backoff_policy put_retry{std::chrono::milliseconds(20), std::chrono::milliseconds(80)};

// The ids of `puts` without an invocation or cleanup row now, asked in one query.
std::set<std::string> unrecorded(invocation_store& invocations,
                                 const std::vector<journal_entry>& puts) {
  std::vector<std::string> ids;
  for (const journal_entry& e : puts)
    ids.push_back(e.request_id);
  const std::vector<std::string> missing = invocations.missing(ids);
  return {missing.begin(), missing.end()};
}

// The answer `f` brings (a transport's own failure, or no future: no answer), counted as a PUT's.
http_result taken_put_answer(std::future<http_result>& f, client_metrics* metrics) {
  http_result answer;
  try {
    answer = f.get();
  } catch (const std::exception& e) {
    answer.transport_failed = true;
    answer.error = e.what();
  } catch (...) {
    answer.transport_failed = true;
    answer.error = "the transport failed";
  }
  note_request(metrics, "PUT", answer);
  return answer;
}

}  // namespace

attempt_puts::attempt_puts(endpoint_core& core, put_wait wait, std::int64_t now_ms)
    : core_(core), wait_(wait), now_ms_(now_ms) {}

void attempt_puts::begin_attempt(std::size_t handler) {
  handler_ = handler;
  attempt_.clear();
}

std::optional<std::int64_t> attempt_puts::send(const journal_entry& put,
                                               std::string_view content_type,
                                               std::string_view body) {
  // Journaled before the PUT goes out: DELETEd later if this attempt does not commit, even after
  // a crash (a PUT sent with the batch's never goes out for an attempt that does not commit).
  // The attempt is marked running (PostgreSQL) before its entry exists, so the orphan recovery
  // never takes an entry whose attempt may still commit. A PUT sent with the batch defers its lock
  // to the next round trip, at the latest launch()'s query of the rows, before it journals
  // anything.
  hold_attempt(core_.db, put.request_id, wait_ != put_wait::in_handler);
  attempt_.push_back(put);
  http_call call{"PUT", put.url, std::string(content_type), std::string(body)};
  if (wait_ != put_wait::in_handler) {  // journaled and sent with the batch's other PUTs
    awaited_.push_back({put.request_id, std::move(call), {}, handler_});
    return std::nullopt;
  }
  batch_.push_back(put);
  core_.journal.record(core_.name, {put}, now_ms_);
  const put_result r = send_until_answered(call, std::nullopt);
  if (r.step.action == lifecycle_action::fail_handler) {
    // A lost answer may hide a staged id: it gets a DELETE in the handler's own savepoint, so a
    // handler that catches this and commits still cleans it up.
    core_.invocations.add_cleanup(put.request_id, core_.name, put.url, now_ms_);
    throw std::runtime_error("invoke_http " + describe_answer("PUT", r.answer));
  }
  crash_point("client.after_put_before_commit");
  return available_until(r.answer);
}

attempt_puts::put_result attempt_puts::send_until_answered(const http_call& call,
                                                           std::optional<http_result> first) {
  const auto send = [&] {
    const auto begun = std::chrono::steady_clock::now();
    http_result r = core_.opts.transport->send(call.method, call.url, call.content_type, call.body);
    if (r.elapsed.count() == 0) {  // a transport that does not time its exchanges
      r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - begun);
    }
    note_request(core_.metrics.get(), call.method, r);
    return r;
  };
  put_result r{first ? std::move(*first) : send(), {}};
  r.step = on_event(invocation_state::put_sent, answer_event(r.answer));
  for (int tries = 1; r.step.action == lifecycle_action::resend; ++tries) {
    if (tries == max_put_tries) {
      r.step = on_event(invocation_state::put_sent, lifecycle_event::put_tries_exhausted);
      break;
    }
    std::this_thread::sleep_for(put_retry.delay(tries - 1, core_.rng));
    r.answer = send();
    r.step = on_event(invocation_state::put_sent, answer_event(r.answer));
  }
  return r;
}

void attempt_puts::queue_deletes(const std::vector<journal_entry>& puts, invocation_state state,
                                 lifecycle_event e) {
  if (on_event(state, e).action != lifecycle_action::queue_cleanup_delete)
    return;
  for (const journal_entry& p : puts)
    core_.invocations.add_cleanup(p.request_id, core_.name, p.url, now_ms_);
}

void attempt_puts::end_failed_attempt(lifecycle_event failure) {
  if (wait_ != put_wait::in_handler) {
    // Its PUTs have not gone out (launch() has not run): dropped, with nothing to DELETE.
    std::erase_if(awaited_, [this](const awaited_put& p) { return p.handler == handler_; });
    return;
  }
  // A PUT awaited in its handler got as far as staged.
  queue_deletes(attempt_, invocation_state::staged, failure);
}

void attempt_puts::launch() {
  // A kept PUT whose invocation row is gone (its handler rolled back a savepoint of its own
  // around invoke_http, then committed) never goes out. Their attempts' locks (hold_attempt), and
  // a handler's RELEASE left for later, go out with the query of their rows if not before.
  std::vector<journal_entry> entries;
  for (const awaited_put& p : awaited_)
    entries.push_back({p.request_id, p.call.url});
  const std::set<std::string> gone = unrecorded(core_.invocations, entries);
  std::erase_if(awaited_, [&gone](const awaited_put& p) { return gone.contains(p.request_id); });
  std::erase_if(entries, [&gone](const journal_entry& e) { return gone.contains(e.request_id); });
  core_.journal.record(core_.name, entries, core_.opts.clock());
  batch_.insert(batch_.end(), entries.begin(), entries.end());
  for (awaited_put& p : awaited_) {
    try {
      p.answer = core_.opts.transport->start(p.call);
    } catch (...) {  // awaited like an exchange that failed
      std::promise<http_result> failed;
      failed.set_exception(std::current_exception());
      p.answer = failed.get_future();
    }
  }
}

void attempt_puts::delete_unrecorded() {
  const std::set<std::string> gone = unrecorded(core_.invocations, batch_);
  for (const journal_entry& e : batch_) {
    if (gone.contains(e.request_id))
      core_.invocations.add_cleanup(e.request_id, core_.name, e.url, now_ms_);
  }
}

bool attempt_puts::staged_for_commit() {
  if (wait_ == put_wait::in_handler) {
    delete_unrecorded();
    return true;
  }
  launch();
  if (wait_ == put_wait::never) {  // its POSTs tell what the PUTs left (observe_unawaited)
    if (!awaited_.empty())
      crash_point("client.after_put_before_commit");  // sent, perhaps not arrived
    return true;
  }
  // Only the PUTs of committed handlers whose invocation rows stand are left; each must be staged.
  bool all_staged = true;
  for (awaited_put& p : awaited_) {
    const put_result r =
        send_until_answered(p.call, taken_put_answer(p.answer, core_.metrics.get()));
    if (r.step.next != invocation_state::staged) {
      all_staged = false;
      continue;
    }
    if (const auto until = available_until(r.answer))
      core_.invocations.record_staged_until(p.request_id, *until);
  }
  if (all_staged && !awaited_.empty())
    crash_point("client.after_put_before_commit");
  return all_staged;
}

void attempt_puts::observe_unawaited() {
  if (wait_ != put_wait::never)
    return;
  // Committed with their PUTs unanswered (lifecycle_event::handler_committed_unanswered): their
  // rows are post_pending, and their POSTs tell what the PUTs left.
  for (awaited_put& p : awaited_)
    core_.unawaited_puts.push_back(std::move(p.answer));
  awaited_.clear();
}

void take_unawaited_answers(endpoint_core& core) {
  // Never throws: a future taken is erased with the others, whatever its answer said.
  auto take = [&core](std::future<http_result>& f) noexcept {
    try {
      const http_result answer = taken_put_answer(f, core.metrics.get());
      const lifecycle_event e = answer_event(answer);
      // Not staged, and not because its POST overtook it and executed it (410 request-consumed).
      if (e != lifecycle_event::answer_created && e != lifecycle_event::answer_ok &&
          e != lifecycle_event::answer_no_answer && e != lifecycle_event::answer_gone) {
        spdlog::warn(
            "invoke_http {} (put_wait::never): the invocation committed; its POST re-PUTs it "
            "until the server stages it or the id is too old",
            describe_answer("PUT", answer));
      }
    } catch (const std::exception& e) {
      spdlog::warn("invoke_http: a PUT's answer (put_wait::never) could not be read: {}", e.what());
    } catch (...) {
      spdlog::warn("invoke_http: a PUT's answer (put_wait::never) could not be read");
    }
  };
  std::vector<std::future<http_result>>& held = core.unawaited_puts;
  std::erase_if(held, [&take](std::future<http_result>& f) {
    if (f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::timeout)
      return false;
    take(f);
    return true;
  });
  // Beyond the limit the oldest are waited for: the worker goes no faster than the server answers.
  const std::size_t limit = core.opts.max_unanswered_puts;
  if (held.size() > limit) {
    spdlog::debug("invoke_http: waiting for {} PUTs' answers beyond max_unanswered_puts ({})",
                  held.size() - limit, limit);
    const auto oldest = held.begin() + static_cast<std::ptrdiff_t>(held.size() - limit);
    std::for_each(held.begin(), oldest, take);
    held.erase(held.begin(), oldest);
  }
}

void attempt_puts::abandon_batch() {
  queue_deletes(batch_, invocation_state::put_sent, lifecycle_event::attempt_abandoned);
}

void attempt_puts::forget() {
  core_.journal.forget(batch_);
}

}  // namespace exactly::client
