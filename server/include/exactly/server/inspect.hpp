#pragma once
// What an operator inspects and repairs in a server's database, on either engine: interactions by
// state, owner, route and age; the server outbox; its dead letters, replayed or dropped. Plain
// functions over a `database` another process may be serving from: each runs ordinary short
// statements (the two mutations one transaction each) and never migrates the schema.

#include <exactly/common/database.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::server::inspect {

// Whether the database holds the server's tables (false: not an exactly server database).
bool has_server_schema(const database& db);

// "staged", "executed" or "tombstone", as listings name them.
enum class state { staged = 1, executed = 2, tombstone = 3 };
std::string_view to_string(state s);
// The state named `name`; nullopt for any other name.
std::optional<state> parse_state(std::string_view name);

struct interaction_filter {
  std::optional<state> only_state;
  std::optional<std::string> owner;
  std::optional<std::string> route;  // the route template, e.g. "/payment/authorize/{id}"
  // Only rows that entered their state at least this long before `now_ms`.
  std::optional<std::int64_t> older_than_ms;
  std::int64_t now_ms = 0;    // the time ages are measured at (Unix ms)
  int limit = 100;            // at most this many rows
  bool oldest_first = false;  // by state_since_ms; newest first by default
};

struct interaction_summary {
  std::string route, id, owner;
  state st = state::staged;
  std::optional<std::string> tombstone_reason;  // "deleted", "expired", "response-expired"
  std::int64_t state_since_ms = 0;
  std::int64_t age_ms = 0;                  // now_ms - state_since_ms
  std::int64_t id_ms = 0;                   // the time in the request id
  std::optional<unsigned> response_status;  // executed only
};

// The interactions `f` selects, ordered by the time they entered their state.
std::vector<interaction_summary> list_interactions(const database& db, const interaction_filter& f);

// Rows by kind, from the counters the server keeps in every transaction (no scan).
struct row_counts {
  std::int64_t staged = 0, executed = 0, tombstone = 0, outbox = 0, dead_letters = 0;
};
row_counts counts(const database& db);

struct interaction_detail : interaction_summary {
  std::optional<std::string> request_content_type, request_body;    // staged/executed
  std::optional<std::string> request_sha256_hex;                    // staged/executed
  std::optional<std::string> response_content_type, response_body;  // executed
};

// The interaction (route, id) with its bodies; nullopt when there is none. Ages at `now_ms`.
std::optional<interaction_detail> show_interaction(const database& db, std::string_view route,
                                                   std::string_view id, std::int64_t now_ms);

struct outbox_entry {
  std::int64_t seq = 0;
  std::string type, source;
  std::int64_t created_ms = 0;
  int attempts = 0;
  std::int64_t next_attempt_ms = 0;  // 0: due at once
  std::optional<std::string> last_error;
};

// Messages waiting in the server outbox, oldest first.
std::vector<outbox_entry> list_outbox(const database& db, int limit = 100);

struct dead_letter {
  std::int64_t seq = 0;  // the outbox sequence number it had
  std::string type, source;
  std::int64_t created_ms = 0;
  int attempts = 0;
  std::string error;
  std::int64_t failed_ms = 0;
};

struct dead_letter_detail : dead_letter {
  std::string body;  // JSON text, as the sender wrote it
};

// Dead letters, oldest first.
std::vector<dead_letter> list_dead_letters(const database& db, int limit = 100);
// Dead letter `seq` with its body; nullopt when there is none.
std::optional<dead_letter_detail> show_dead_letter(const database& db, std::int64_t seq);

// What replay_dead_letter did.
enum class replay_result {
  replayed,          // moved into the outbox
  not_found,         // no dead letter `seq` and no outbox message `seq`: nothing changed
  already_in_outbox  // the outbox holds `seq` already (another replay came first): nothing changed
};

// In one transaction, moves dead letter `seq` back into the outbox under its sequence number,
// attempts 0, due at once, its error kept as last_error, so the dispatcher delivers it again.
replay_result replay_dead_letter(const database& db, std::int64_t seq);
// Deletes dead letter `seq`; false when there was none.
bool drop_dead_letter(const database& db, std::int64_t seq);

}  // namespace exactly::server::inspect
