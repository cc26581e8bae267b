#pragma once
// Plain values the connector takes and gives: requests, answers, retention settings and counts.

#include <exactly/common/error.hpp>
#include <exactly/common/protocol.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace exactly::server {

// Retention and acceptance settings, in milliseconds.
struct timing {
  std::int64_t staged_ttl_ms = 24LL * 3600 * 1000;
  std::int64_t response_retention_ms = 7LL * 24 * 3600 * 1000;
  std::int64_t acceptance_window_ms = 3600LL * 1000;
  std::int64_t max_future_skew_ms = 5LL * 60 * 1000;
};

// What one sweep did.
struct sweep_result {
  std::int64_t expired_staged = 0;     // staged rows past their TTL turned into tombstones
  std::int64_t expired_responses = 0;  // executed rows past retention turned into tombstones
  std::int64_t purged_tombstones = 0;  // tombstones deleted
  std::int64_t released_pages = 0;     // free database pages given back to the file system
};

// Interactions stored, by state.
struct state_counts {
  std::int64_t staged = 0, executed = 0, tombstone = 0;
};

// Executions and replays count once their transaction (inside a commit group: the group's)
// has committed, so a group whose COMMIT fails adds nothing.
struct connector_stats {
  std::int64_t executions = 0, replays = 0, logic_failures = 0;
  std::int64_t swept_staged = 0, swept_responses = 0, purged_tombstones = 0, released_pages = 0;
  std::int64_t messages_delivered = 0, messages_failed = 0, messages_dead_lettered = 0;
  std::int64_t clock_step_backs = 0;  // times the system clock fell behind the protocol's time
};

// One protocol request, after HTTP parsing and authentication.
struct interaction_request {
  verb v = verb::get;
  std::string_view route;      // the route template, e.g. "/payment/authorize/{id}"
  std::string_view id;         // the raw id path segment
  std::string_view principal;  // "" in open mode
  std::string_view content_type;
  std::string_view body;
  // The caller commits this request without a flush (see connector::may_defer_flush): a
  // decision that needs one is then not made (503 storage-unavailable, nothing written).
  bool unflushed = false;
  // Where a failure of the request's writes found after its answer was made goes (PostgreSQL
  // sends them with a later round trip of its commit group); the caller answers the failure
  // instead. Null: they are sent before the answer is made.
  std::shared_ptr<std::exception_ptr> failed_later = nullptr;
};

// A response to send: protocol answer, stored response or problem.
struct interaction_response {
  unsigned status = 200;
  std::string content_type;
  std::string body;
  std::string outcome;          // "executed" / "replayed" / "" for none
  std::optional<errc> problem;  // set when this is a protocol problem
  // Unix ms until which the stored response (or, answering a PUT, the staged request) stays
  // available; sent as the Exactly-Once-Retention HTTP-date, rounded down to the second.
  std::optional<std::int64_t> available_until_ms{};
};

}  // namespace exactly::server
