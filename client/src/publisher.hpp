#pragma once
// Publishes an endpoint's committed steps: due POSTs, re-PUTs (a POST met 404) and DELETEs, after
// turning the journaled ids of attempts that died uncommitted into DELETEs.

#include "endpoint_core.hpp"

#include <cstddef>

namespace exactly::client {

// Sends up to `limit` due POSTs, re-PUTs and DELETEs of each kind; returns how many finished.
// A turn refused after it ran follow-ups runs once more with them queued (client/DESIGN.md).
std::size_t publish_due_steps(endpoint_core& core, int limit);

}  // namespace exactly::client
