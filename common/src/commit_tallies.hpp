#pragma once
// Private: the amounts a PostgreSQL connection's transactions add up (pg::connection::tally), by
// the depth of the transaction or savepoint that added them, summed when the outermost commits.

#include <exactly/common/postgres.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace exactly::detail {

class commit_tallies {
 public:
  // Adds `delta` to `slot` at transaction depth `depth` (> 0).
  void add(int depth, std::size_t slot, std::int64_t delta) {
    if (!entries_.empty() && entries_.back().depth == depth && entries_.back().slot == slot)
      entries_.back().delta += delta;  // the same step again: one entry
    else
      entries_.push_back({depth, slot, delta});
  }
  // The transaction or savepoint at `level` rolled back: what it and deeper ones added is dropped.
  void rolled_back(int level) {
    std::erase_if(entries_, [level](const entry& e) { return e.depth >= level; });
  }
  // The savepoint at `level` (> 1) was released: what it added now belongs to the level above.
  void released(int level) {
    for (entry& e : entries_)
      e.depth = std::min(e.depth, level - 1);
  }
  // The outermost transaction commits: the totals, emptied; nullopt if every one is 0.
  std::optional<pg::tally_totals> take() {
    pg::tally_totals t{};
    for (const entry& e : entries_)
      t[e.slot] += e.delta;
    entries_.clear();
    if (std::all_of(t.begin(), t.end(), [](std::int64_t v) { return v == 0; }))
      return std::nullopt;
    return t;
  }

 private:
  struct entry {
    int depth;
    std::size_t slot;
    std::int64_t delta;
  };
  std::vector<entry> entries_;
};

}  // namespace exactly::detail
