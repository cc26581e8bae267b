// A protocol request carried out: route and id resolved, the id state machine's decision applied
// to the storage contract, the logic run once.
#include <exactly/common/crash_point.hpp>
#include <exactly/common/digest.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/common/storage_error.hpp>

#include "connector_impl.hpp"
#include "respond.hpp"

#include <stdexcept>

namespace exactly::server {
namespace {

// A stored response, first sent or replayed: either way with the time the response executed at
// `executed_at_ms` stays available until.
interaction_response stored(const stored_response& r, std::string_view outcome,
                            std::int64_t executed_at_ms, const timing& t) {
  record_facts executed;
  executed.state = id_state::executed;
  executed.state_since_ms = executed_at_ms;
  return {r.status,     r.content_type,
          r.body,       std::string(outcome),
          std::nullopt, available_until(executed, t)};
}

// An answer without a body (200, 201, 204).
interaction_response bodiless(unsigned status) {
  return {status, "", "", "", std::nullopt, std::nullopt};
}

// The 201 or 200 to a PUT: the staged request since `staged_at_ms` waits for its POST until
// its TTL ends.
interaction_response staged_answer(unsigned status, std::int64_t staged_at_ms, const timing& t) {
  record_facts staged;
  staged.state = id_state::staged;
  staged.state_since_ms = staged_at_ms;
  interaction_response a = bodiless(status);
  a.available_until_ms = available_until(staged, t);
  return a;
}

// Commits a request's writes, its answer made next: with the group's next round trip when the
// caller takes a failure found there (r.failed_later).
void commit_answered(store_transaction& tx, const interaction_request& r) {
  if (!r.failed_later) {
    tx.commit();
    return;
  }
  tx.commit_later([failed = r.failed_later](std::exception_ptr e) { *failed = std::move(e); });
}

}  // namespace

template <class Fn>
interaction_response connector::impl::answer(const interaction_request& r, Fn carry_out) {
  const auto route = routes.find(r.route);
  if (route == routes.end())
    return problem_response(errc::not_found, "no such route");
  const auto id = request_id::parse(r.id);
  if (!id) {
    return problem_response(errc::invalid_request_id,
                            "the id must be a canonical lowercase UUID version 7");
  }
  try {
    return carry_out(*id, route->second);
  } catch (...) {
    return failure_response(std::current_exception(), errc::internal_error,
                            std::string(r.route) + " " + id->to_string());
  }
}

interaction_response connector::impl::read(const interaction_request& r, const request_id& id) {
  const request_facts facts{r.v, r.principal, id.timestamp_ms(), clock.now(), "", r.content_type};
  std::optional<interaction_record> rec;
  try {
    rec = reader->find(r.route, r.id);
  } catch (const storage_error&) {
    if (reader->available())
      throw;
    // The connection was lost (PostgreSQL restarted since the last GET, say): a read is tried
    // once more, on the connection it reopens, rather than answered 503.
    rec = reader->find(r.route, r.id);
  }
  std::optional<record_facts> known;
  if (rec)
    known = *rec;
  const decision d = decide(known, facts, opts.times);
  if (d.next_action == action::replay) {
    ++read_replays;
    return stored(rec->response, protocol::outcome_replayed, rec->state_since_ms, opts.times);
  }
  if (d.next_action != action::fail)
    throw std::logic_error("a GET decided to write");
  return problem_response(d.error);
}

interaction_response connector::impl::handle(const interaction_request& r, const request_id& id,
                                             const route_entry& route) {
  std::int64_t now = clock.now();
  const std::string id_text(r.id);
  std::string digest;
  if (r.v == verb::put)
    digest = sha256(r.body);

  interaction_store& store = this->store();
  auto tx = store.begin(r.v != verb::get);
  if (r.v != verb::get)
    store.lock_id(r.route, id_text);
  // Bodies are read only where they are used: to execute (POST) or replay (POST, GET).
  std::optional<interaction_record> rec;
  std::optional<record_facts> known;
  staged_load load;  // a PUT's principal's, read with the lookup
  if (r.v == verb::post || r.v == verb::get) {
    rec = store.find(r.route, id_text);
    if (rec)
      known = *rec;
  } else if (r.v == verb::put) {
    // As below, with the principal's staged load read in the same breath.
    put_lookup l = store.find_for_put(r.route, id_text, r.principal);
    known = std::move(l.known);
    if (!known)
      now = clock.now_at_least(l.clock_floor);
    load = l.load;
  } else {
    known = store.find_facts(r.route, id_text);
    // Whether an unknown id may be staged, or needs a tombstone, is decided no earlier than any
    // sweep that may have purged it (read after the lookup: a purge committed since is seen).
    if (!known)
      now = clock.now_at_least(store.clock_floor());
  }
  const request_facts facts{r.v, r.principal, id.timestamp_ms(), now, digest, r.content_type};
  decision d = decide(known, facts, opts.times);
  // An unknown id refused as too old (PUT, POST) or left without a tombstone (DELETE): the time
  // that decided it is persisted, flushed with the answer, so neither a restart nor a clock set
  // back later decides with an earlier one (proto-spec §7; the model's persist_too_old).
  const bool too_old_unknown = !known && id.timestamp_ms() < now - opts.times.acceptance_window_ms;
  if (too_old_unknown && r.v != verb::get) {
    if (r.unflushed)
      return problem_response(errc::storage_unavailable,
                              "the id reached the edge of the acceptance window; try again");
    store.raise_clock_floor(now);
    tx->commit();
  }
  if (known && r.v != verb::get) {
    // The first write to see an expiry writes it down, as the sweeper would: the answer given
    // now (gone, or nothing to delete) then holds even if the clock is set back later.
    const record_facts seen = effective(*known, now, opts.times);
    if (seen.state != known->state) {
      store.put_tombstone(r.route, id_text, known->owner, id.timestamp_ms(), seen.reason, now,
                          known->state);
      known->state = seen.state;  // what the row is now, should a write follow
      tx->commit();
    }
  }

  if (d.next_action == action::stage) {
    const incoming_request in{r.content_type, r.body};
    const auto refusal = route.validate(in);
    if (refusal)
      load = {};
    d = decide_stage(!refusal, load.rows, opts.max_staged_per_principal,
                     refusal ? 0 : load.bytes + static_cast<std::int64_t>(r.body.size()),
                     opts.max_staged_bytes_per_principal);
    if (d.next_action == action::fail && d.error == errc::invalid_payload) {
      return problem_response(errc::invalid_payload, *refusal);
    }
  }

  switch (d.next_action) {
    case action::fail:
      return problem_response(d.error);
    case action::confirm_staged:
      return staged_answer(200, known->state_since_ms, opts.times);
    case action::replay:
      tx.reset();  // a read: over; the replay counts once its answer may go out
      store.after_commit([this] { count([](connector_stats& s) { ++s.replays; }); });
      return stored(rec->response, protocol::outcome_replayed, rec->state_since_ms, opts.times);
    case action::no_change:
      return bodiless(204);
    case action::stage:
      store.insert_staged(r.route, id_text, r.principal, id.timestamp_ms(), now, r.content_type,
                          r.body, digest);
      commit_answered(*tx, r);
      return staged_answer(201, now, opts.times);
    case action::tombstone:
    case action::tombstone_unknown:
      store.put_tombstone(r.route, id_text, r.principal, id.timestamp_ms(),
                          tombstone_reason::deleted, now,
                          known ? std::optional(known->state) : std::nullopt);
      commit_answered(*tx, r);
      return bodiless(204);
    case action::execute:
      break;
  }

  // action::execute: the logic, the stored response and its messages commit together.
  stored_response response;
  try {
    basic_session base(db(), r.route, id, r.principal,
                       outbox_sender(std::string(r.route) + " " + id_text, now));
    response = route.execute(base, {rec->request_content_type, rec->request_body});
  } catch (...) {
    // `tx` (in a commit group: a savepoint) rolls back the logic's writes; the id stays staged.
    interaction_response failed =
        failure_response(std::current_exception(), errc::execution_failed,
                         "logic of " + std::string(r.route) + " " + id_text);
    if (failed.problem == errc::execution_failed)
      count([](connector_stats& s) { ++s.logic_failures; });
    return failed;
  }
  store.mark_executed(r.route, id_text, response, now);
  // Once durable (inside a commit group: once the group's COMMIT has returned), before the
  // answer goes out; never if this request's writes roll back.
  store.after_commit([this] {
    crash_point("server.after_commit_before_reply");
    count([](connector_stats& s) { ++s.executions; });
    if (on_durable_execution)
      on_durable_execution();
  });
  commit_answered(*tx, r);
  return stored(response, protocol::outcome_executed, now, opts.times);
}

bool connector::may_defer_flush(const interaction_request& r) const {
  // Ids a minute or more inside the window: a request waits far less than that for its group.
  constexpr std::int64_t margin_ms = 60'000;
  if (r.v != verb::put && r.v != verb::delete_)
    return false;
  const auto id = request_id::parse(r.id);
  return id && id->timestamp_ms() - margin_ms >=
                   impl_->clock.now() - impl_->opts.times.acceptance_window_ms;
}

interaction_response connector::handle(const interaction_request& r) {
  return impl_->answer(r, [&](const request_id& id, const impl::route_entry& route) {
    return impl_->handle(r, id, route);
  });
}

interaction_response connector::read(const interaction_request& r) {
  if (r.v != verb::get || !impl_->reader)
    throw std::logic_error("connector::read carries out GETs, and only when has_separate_reads()");
  return impl_->answer(
      r, [&](const request_id& id, const impl::route_entry&) { return impl_->read(r, id); });
}

bool connector::has_separate_reads() const {
  return impl_->reader != nullptr;
}

bool connector::reads_take_a_round_trip() const {
  return impl_->reader != nullptr && impl_->opts.postgres.has_value();
}

}  // namespace exactly::server
