#pragma once
// The server's per-id state machine, sans I/O: given what storage holds for an interaction and
// the facts of a request, decide what to do. The connector only carries out these decisions.

#include <exactly/common/error.hpp>
#include <exactly/common/protocol.hpp>
#include <exactly/server/connector_types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly::server {

enum class id_state { staged = 1, executed = 2, tombstone = 3 };
enum class tombstone_reason { deleted = 1, expired = 2, response_expired = 3 };

// What storage holds for one interaction (request and response bodies are not needed to decide).
struct record_facts {
  id_state state = id_state::staged;
  tombstone_reason reason = tombstone_reason::deleted;  // meaningful for tombstones only
  std::string owner;
  std::int64_t state_since_ms = 0;   // when the row entered its state
  std::string request_sha256;        // staged/executed only
  std::string request_content_type;  // staged/executed only
};

// The facts of one request, after authentication and id parsing.
struct request_facts {
  verb v = verb::get;
  std::string_view principal;
  std::int64_t id_ms = 0;         // timestamp embedded in the request id
  std::int64_t now_ms = 0;        // server clock
  std::string_view body_sha256;   // PUT only
  std::string_view content_type;  // PUT only
};

enum class action {
  stage,              // PUT of an unknown id: validate (decide_stage), insert staged, 201
  confirm_staged,     // PUT identical to the staged request: 200, nothing written
  execute,            // POST of a staged id: run the logic, store the response, 200-ish + executed
  replay,             // POST/GET of an executed id: stored response + replayed
  tombstone,          // DELETE of an owned staged/executed id: drop bodies, keep a tombstone, 204
  tombstone_unknown,  // DELETE of an unknown id inside the window: write a tombstone, 204
  no_change,          // DELETE of a tombstone, or of an unknown id outside the window: 204
  fail,               // answer the problem in `error`
};

struct decision {
  action next_action = action::fail;
  errc error = errc::request_unknown;  // meaningful when next_action == fail

  friend bool operator==(const decision&, const decision&) = default;
};

// The state a record is in at `now_ms`: staged past its TTL reads as tombstone(expired),
// executed past retention as tombstone(response_expired).
record_facts effective(const record_facts& r, std::int64_t now_ms, const timing& t);

// Until when (exclusive, Unix ms) the record stays usable as it is: a staged request can be
// POSTed until staged_at + staged TTL, a stored response fetched until executed_at + response
// retention. nullopt for a tombstone. The one place that turns retention settings into times.
std::optional<std::int64_t> available_until(const record_facts& r, const timing& t);

// Decides a request against the stored record (nullopt = unknown id). Total and pure.
decision decide(const std::optional<record_facts>& stored, const request_facts& req,
                const timing& t);

// Second step of action::stage, once the route's parse step and the principal's staged count
// and bytes are known: stage, or fail with invalid_payload / too_many_staged (at the count
// limit, or when `staged_bytes_after`, the principal's staged body bytes with this body, would
// exceed `max_staged_bytes`).
decision decide_stage(bool payload_valid, std::int64_t principal_staged,
                      std::int64_t max_staged_per_principal, std::int64_t staged_bytes_after,
                      std::int64_t max_staged_bytes);

// Whether a tombstone may be purged at `now_ms`: both the id's time and the tombstone's age have
// left the acceptance window, so a PUT of the id is refused as too old; or the tombstone's age
// has, and its id is further ahead of the tombstone than the future skew, so it was never staged
// (a PUT could not have staged it before the tombstone was written) and nothing of it ran.
bool tombstone_purgeable(std::int64_t id_ms, std::int64_t tombstoned_at_ms, std::int64_t now_ms,
                         const timing& t);

}  // namespace exactly::server
