#pragma once
// What the operator page shows, read on the storage thread and rendered as HTML: the figures of
// a scrape, and bounded listings of interactions, the outbox and the dead letters.

#include "metrics.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exactly::server {

// The page's filter, from its query string (?state=staged|executed|tombstone&owner=NAME).
struct operator_filter {
  std::optional<int> state;  // 1 staged, 2 executed, 3 tombstone; none: staged and executed
  std::string owner;         // "" = every owner
};

struct interaction_row {
  std::string route;  // the template, e.g. /payments/{id}
  std::string id;
  std::string owner;
  int state = 0;                       // 1 staged, 2 executed, 3 tombstone
  std::int64_t state_since_ms = 0;     // when it entered its state
  std::optional<int> response_status;  // executed: the stored response's status
};

struct outbox_row {
  std::int64_t seq = 0;
  std::string type;
  std::string source;  // the route and id whose execution sent it
  std::int64_t created_ms = 0;
  std::int64_t attempts = 0;
  std::int64_t next_attempt_ms = 0;
  std::string last_error;  // "" before a failed attempt
};

struct dead_letter_row {
  std::int64_t seq = 0;
  std::string type;
  std::string source;
  std::int64_t created_ms = 0;
  std::int64_t attempts = 0;
  std::string error;
  std::int64_t failed_ms = 0;
};

// The first rows of a listing, and how many it has in all.
template <class Row>
struct listing {
  std::vector<Row> rows;
  std::int64_t total = 0;
};

// One listing of interactions in `state` (oldest first when staged, newest first otherwise).
struct interaction_listing {
  int state = 0;
  listing<interaction_row> list;
};

struct operator_view {
  storage_figures figures;
  std::int64_t now_ms = 0;  // the connector's clock
  std::chrono::seconds uptime{0};
  std::size_t max_rows = 0;
  operator_filter filter;
  std::vector<interaction_listing> interactions;
  listing<outbox_row> outbox;
  listing<dead_letter_row> dead_letters;
};

}  // namespace exactly::server
