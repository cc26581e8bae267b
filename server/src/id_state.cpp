// The per-id state machine: decisions from stored facts and request facts (see id_state.hpp).
#include "id_state.hpp"

namespace exactly::server {
namespace {

constexpr decision fail(errc e) {
  return {action::fail, e};
}
constexpr decision proceed(action a) {
  return {a, errc::request_unknown};
}

errc gone_problem(tombstone_reason r) {
  switch (r) {
    case tombstone_reason::deleted:
      return errc::request_consumed;
    case tombstone_reason::expired:
      return errc::request_expired;
    case tombstone_reason::response_expired:
      return errc::response_expired;
  }
  return errc::request_consumed;
}

decision decide_unknown(const request_facts& req, const timing& t) {
  switch (req.v) {
    case verb::put:
      if (req.id_ms < req.now_ms - t.acceptance_window_ms)
        return fail(errc::request_too_old);
      if (req.id_ms > req.now_ms + t.max_future_skew_ms)
        return fail(errc::invalid_request_id);
      return proceed(action::stage);
    case verb::post:
    case verb::get:
      // An id too old to be staged that has no row either was never staged or its tombstone was
      // purged: it is gone for good, whoever asks (an unknown id has no owner). A young one may
      // still be PUT (404); so may one from the future once the clock comes within the skew.
      if (req.id_ms < req.now_ms - t.acceptance_window_ms)
        return fail(errc::request_too_old);
      return fail(errc::request_unknown);
    case verb::delete_:
      // Outside the window a PUT is refused, so a tombstone would guard nothing: one too old is
      // not needed any more, one too far in the future could not be purged until the clock
      // reached it.
      if (req.id_ms < req.now_ms - t.acceptance_window_ms ||
          req.id_ms > req.now_ms + t.max_future_skew_ms)
        return proceed(action::no_change);
      return proceed(action::tombstone_unknown);
  }
  return fail(errc::request_unknown);
}

}  // namespace

record_facts effective(const record_facts& r, std::int64_t now_ms, const timing& t) {
  record_facts e = r;
  if (r.state == id_state::staged && r.state_since_ms + t.staged_ttl_ms <= now_ms) {
    e.state = id_state::tombstone;
    e.reason = tombstone_reason::expired;
    e.state_since_ms = r.state_since_ms + t.staged_ttl_ms;
  } else if (r.state == id_state::executed &&
             r.state_since_ms + t.response_retention_ms <= now_ms) {
    e.state = id_state::tombstone;
    e.reason = tombstone_reason::response_expired;
    e.state_since_ms = r.state_since_ms + t.response_retention_ms;
  }
  return e;
}

std::optional<std::int64_t> available_until(const record_facts& r, const timing& t) {
  switch (r.state) {
    case id_state::staged:
      return r.state_since_ms + t.staged_ttl_ms;
    case id_state::executed:
      return r.state_since_ms + t.response_retention_ms;
    case id_state::tombstone:
      break;
  }
  return std::nullopt;
}

decision decide(const std::optional<record_facts>& stored, const request_facts& req,
                const timing& t) {
  if (!stored)
    return decide_unknown(req, t);
  // Another principal's id looks unknown, and nothing about it is revealed or changed.
  if (stored->owner != req.principal)
    return fail(errc::request_unknown);

  const record_facts r = effective(*stored, req.now_ms, t);
  switch (r.state) {
    case id_state::staged:
      switch (req.v) {
        case verb::put:
          if (r.request_sha256 == req.body_sha256 && r.request_content_type == req.content_type) {
            return proceed(action::confirm_staged);
          }
          return fail(errc::request_mismatch);
        case verb::post:
          return proceed(action::execute);
        case verb::get:
          return fail(errc::not_executed);
        case verb::delete_:
          return proceed(action::tombstone);
      }
      break;
    case id_state::executed:
      switch (req.v) {
        case verb::put:
          return fail(errc::request_consumed);
        case verb::post:
        case verb::get:
          return proceed(action::replay);
        case verb::delete_:
          return proceed(action::tombstone);
      }
      break;
    case id_state::tombstone:
      switch (req.v) {
        case verb::put:
          return fail(errc::request_consumed);
        case verb::post:
        case verb::get:
          return fail(gone_problem(r.reason));
        case verb::delete_:
          // Unchanged; an expiry not yet swept keeps its reason until the sweeper writes it.
          return proceed(action::no_change);
      }
      break;
  }
  return fail(errc::request_unknown);
}

decision decide_stage(bool payload_valid, std::int64_t principal_staged,
                      std::int64_t max_staged_per_principal, std::int64_t staged_bytes_after,
                      std::int64_t max_staged_bytes) {
  if (!payload_valid)
    return fail(errc::invalid_payload);
  if (principal_staged >= max_staged_per_principal || staged_bytes_after > max_staged_bytes)
    return fail(errc::too_many_staged);
  return proceed(action::stage);
}

bool tombstone_purgeable(std::int64_t id_ms, std::int64_t tombstoned_at_ms, std::int64_t now_ms,
                         const timing& t) {
  const std::int64_t horizon = now_ms - t.acceptance_window_ms;
  return tombstoned_at_ms < horizon &&
         (id_ms < horizon || id_ms > tombstoned_at_ms + t.max_future_skew_ms);
}

}  // namespace exactly::server
