// Attempts between their PUT and their commit, seen by the orphan recovery across processes.
#include "attempt_liveness.hpp"

#include <exactly/common/postgres.hpp>

namespace exactly::client {
namespace {

// The first key of the two-key advisory locks of attempts; the second is the id's hash. A hash
// collision only makes the recovery wait for another attempt's end.
constexpr int attempt_lock_class = 0x45784131;  // "ExA1"

}  // namespace

void hold_attempt(const database& db, std::string_view request_id, bool deferred) {
  if (db.kind() != engine::postgres)
    return;
  constexpr std::string_view lock = "SELECT pg_advisory_xact_lock($1::int4, hashtext($2))";
  if (deferred)
    db.as_postgres().defer(lock, attempt_lock_class, request_id);
  else
    db.as_postgres().query(lock, attempt_lock_class, request_id);
}

bool attempt_ended(const database& db, std::string_view request_id) {
  if (db.kind() != engine::postgres)
    return true;
  return db.as_postgres()
             .query_int64("SELECT pg_try_advisory_xact_lock($1::int4, hashtext($2))::int",
                          attempt_lock_class, request_id)
             .value_or(0) == 1;
}

}  // namespace exactly::client
