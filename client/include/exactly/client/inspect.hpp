#pragma once
// An operator's view of a client database (either engine), for tools and metrics: queue depths,
// invocations by state, the error queue; and the error queue's repairs (requeue, drop), each one
// transaction of its own. Safe beside running endpoints: reads see what is committed, writes are
// ordinary transactions. Reads expect the client tables (a database an endpoint has opened) and
// throw the engine's storage_error without them. Mutations never create or migrate tables: they
// throw std::runtime_error, changing nothing, unless the queue tables are at the schema version
// this build knows.

#include <exactly/client/message.hpp>
#include <exactly/common/database.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::client::inspect {

// Whether `db` holds the client's queue and invocation tables.
bool is_client_database(const database& db);

// One endpoint's input queue and error queue.
struct queue_depth {
  std::string endpoint;
  std::int64_t due = 0;      // queued messages due at now_ms
  std::int64_t delayed = 0;  // queued messages waiting for a retry after now_ms
  std::int64_t errors = 0;   // messages in its error queue
};

// Every endpoint with a message in its queue or error queue, by name. Counts only.
std::vector<queue_depth> queue_depths(const database& db, std::int64_t now_ms);

// Unfinished invoke_http calls in one stored state.
struct invocation_count {
  std::string state;  // one of stored_state_names()
  std::int64_t count = 0;
};

// The names of the stored invocation states in lifecycle order: "post_pending",
// "restage_pending", "awaiting_follow_up", "delete_pending".
std::vector<std::string> stored_state_names();

// The stored states in lifecycle order, zeros included. Counts only.
std::vector<invocation_count> invocation_counts(const database& db);

// Which invocations invocations() lists; an empty field matches all.
struct invocation_filter {
  std::string state{};       // one of the stored states; another name throws std::invalid_argument
  std::string endpoint{};    // the endpoint receiving the follow-up
  std::string url_prefix{};  // the POST's URL starts with this
  std::int64_t min_age_ms = 0;  // recorded at least this long before now_ms
  int limit = 100;              // oldest first
};

// One unfinished invoke_http.
struct invocation_summary {
  std::string request_id;
  std::string endpoint;  // receives the follow-up
  std::string url;       // the route: where the POST (and DELETE) goes
  std::string state;
  int attempts = 0;  // failed sends of the step in progress
  std::string last_error{};
  std::int64_t created_ms = 0;  // when the handler committed it
  std::int64_t due_ms = 0;      // when its step is next sent
  std::int64_t age_ms = 0;      // now_ms - created_ms
};

// Unfinished invocations matching `f`, oldest first.
std::vector<invocation_summary> invocations(const database& db, const invocation_filter& f,
                                            std::int64_t now_ms);

// Which entries errors() lists; an empty endpoint matches all.
struct error_filter {
  std::string endpoint{};
  std::int64_t after_seq = 0;  // entries after this one (paging)
  int limit = 100;             // by seq, oldest first
};

// An error-queue entry without its headers and body.
struct error_summary {
  std::int64_t seq = 0;
  std::string endpoint;
  std::string message_id;
  std::string type;
  int attempts = 0;
  std::string error;  // the last failure
  std::int64_t failed_ms = 0;
};

std::vector<error_summary> errors(const database& db, const error_filter& f = {});
// Error-queue entry `seq` with its headers and body; nullopt when there is none.
std::optional<error_entry> error(const database& db, std::int64_t seq);

// Puts the entries `seqs` back in their endpoints' queues, due at now_ms with attempts reset, in
// one transaction. Returns the entries it moved; seqs not in the error queue are skipped. An entry
// whose message id is queued already leaves the error queue and is queued once.
std::vector<error_summary> requeue_errors(const database& db, std::span<const std::int64_t> seqs,
                                          std::int64_t now_ms);
// The same for every entry of `endpoint`'s error queue.
std::vector<error_summary> requeue_all_errors(const database& db, std::string_view endpoint,
                                              std::int64_t now_ms);
// Deletes the entries `seqs` in one transaction. Returns the entries it deleted.
std::vector<error_summary> drop_errors(const database& db, std::span<const std::int64_t> seqs);

}  // namespace exactly::client::inspect
