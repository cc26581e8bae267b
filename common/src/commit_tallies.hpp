#pragma once
// Private: the amounts a PostgreSQL connection's transactions add up (pg::connection::tally), by
// the depth of the transaction or savepoint that added them, summed when the outermost commits.

#include <exactly/common/postgres.hpp>

#include "depth_entries.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace exactly::detail {

class commit_tallies : public depth_entries<std::pair<std::size_t, std::int64_t>> {
 public:
  // Adds `delta` to `slot` at transaction depth `depth` (> 0).
  void add(int depth, std::size_t slot, std::int64_t delta) { keep(depth, {slot, delta}); }
  // The outermost transaction commits: the totals, emptied; nullopt if every one is 0.
  std::optional<pg::tally_totals> take() {
    pg::tally_totals t{};
    for (const auto& [depth, entry] : take_all())
      t[entry.first] += entry.second;
    if (std::all_of(t.begin(), t.end(), [](std::int64_t v) { return v == 0; }))
      return std::nullopt;
    return t;
  }
};

}  // namespace exactly::detail
