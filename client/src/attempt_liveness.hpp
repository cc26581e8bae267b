#pragma once
// Whether the handler attempt that journaled an id may still commit it. On SQLite the orphan
// recovery holds the write lock, so no attempt is between its PUT and its commit then; on
// PostgreSQL nothing excludes other workers, so an attempt holds a transaction-level advisory lock
// on its id from before the journal entry until its transaction ends, and the recovery takes an
// entry only when that lock is free.

#include <exactly/common/database.hpp>

#include <string_view>

namespace exactly::client {

// In the handler's open transaction on `db`: marks the attempt about to journal `request_id` as
// running until that transaction ends (PostgreSQL: pg_advisory_xact_lock, released early if the
// savepoint that took it rolls back, when the id has no invocation row and is due a DELETE
// anyway; SQLite: nothing). Taken at once, or `deferred` to the transaction's next round trip,
// which the caller must wait for before it journals the id.
void hold_attempt(const database& db, std::string_view request_id, bool deferred = false);
// In the caller's open transaction on `db`: true when no other transaction holds `request_id`'s
// attempt, i.e. it has committed or rolled back (the lock is then held until the caller's
// transaction ends). Always true on SQLite, whose write lock the caller holds.
bool attempt_ended(const database& db, std::string_view request_id);

}  // namespace exactly::client
