#pragma once
// Runs an endpoint's due messages as one batch in one transaction, each handler in a savepoint of
// its own, follow-ups with their stored responses.

#include "endpoint_core.hpp"

#include <cstddef>

namespace exactly::client {

// Handles up to `limit` due messages of `core`'s endpoint; returns how many left the queue.
// Storage trouble (storage_error::storage_failure()) propagates with nothing of the batch
// committed. A batch the database refused otherwise runs again one message at a time, and the
// message refused alone is charged an attempt (retried with backoff, error-queued after
// max_attempts). What propagates from there (storage trouble, a refused charge, thrown once the
// other messages have run) leaves the messages committed alone committed.
std::size_t run_due_messages(endpoint_core& core, int limit);

}  // namespace exactly::client
