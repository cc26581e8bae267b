#pragma once
// What the operator page shows, read on the storage thread and rendered as HTML: the figures of
// a scrape, and bounded listings of interactions, the outbox and the dead letters (read through
// the inspection API, inspect.hpp).

#include <exactly/server/inspect.hpp>

#include "metrics.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exactly::server {

// The page's filter, from its query string (?state=staged|executed|tombstone&owner=NAME).
struct operator_filter {
  std::optional<inspect::state> state;  // none: staged and executed
  std::string owner;                    // "" = every owner
};

// The first rows of a listing, and how many it has in all.
template <class Row>
struct listing {
  std::vector<Row> rows;
  std::int64_t total = 0;
};

// One listing of interactions in `state` (oldest first when staged, newest first otherwise).
struct interaction_listing {
  inspect::state state = inspect::state::staged;
  listing<inspect::interaction_summary> list;
};

struct operator_view {
  storage_figures figures;
  std::int64_t now_ms = 0;  // the connector's clock
  std::chrono::seconds uptime{0};
  std::size_t max_rows = 0;
  operator_filter filter;
  std::vector<interaction_listing> interactions;
  listing<inspect::outbox_entry> outbox;       // oldest first
  listing<inspect::dead_letter> dead_letters;  // oldest first
};

}  // namespace exactly::server
