#pragma once
// Runs an endpoint's due messages as one batch in one transaction, each handler in a savepoint of
// its own, follow-ups with their stored responses.

#include "endpoint_core.hpp"

#include <cstddef>

namespace exactly::client {

// Handles up to `limit` due messages of `core`'s endpoint; returns how many left the queue. A
// refused batch runs its messages alone and charges the one refused alone (client/DESIGN.md).
std::size_t run_due_messages(endpoint_core& core, int limit);

}  // namespace exactly::client
