#pragma once
// The ids PUT by handler attempts that ended without committing (a crash, a batch rolled back):
// read from the attempt journal once their attempt has ended, and given DELETEs.

#include "endpoint_core.hpp"

#include <cstddef>
#include <cstdint>

namespace exactly::client {

// Queues DELETEs for `core`'s journaled ids older than orphan_grace whose attempts ended without
// committing; returns how many. Reads the journal at most every quarter of orphan_grace (a DELETE
// waits that much longer at most), and again at once after a full page.
std::size_t recover_orphans(endpoint_core& core, std::int64_t now);

}  // namespace exactly::client
