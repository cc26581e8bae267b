#pragma once
// Private: entries kept by the depth of the transaction or savepoint that added them, the one
// mechanism under the commit hooks and the PostgreSQL tallies.

#include <algorithm>
#include <utility>
#include <vector>

namespace exactly::detail {

template <class T>
class depth_entries {
 public:
  // The transaction or savepoint at `level` rolled back: its entries and deeper ones are dropped.
  void rolled_back(int level) {
    std::erase_if(entries_, [level](const auto& e) { return e.first >= level; });
  }
  // The entries kept at `level` or deeper, in the order kept.
  std::vector<T> from_level(int level) {
    std::vector<T> out;
    for_each_from(level, [&](const T& e) { out.push_back(e); });
    return out;
  }
  // Calls `fn` on each entry kept at `level` or deeper, in the order kept.
  template <class F>
  void for_each_from(int level, F fn) {
    for (auto& e : entries_)
      if (e.first >= level)
        fn(e.second);
  }
  // The savepoint at `level` (> 1) was released: its entries now belong to the enclosing level.
  void released(int level) {
    for (auto& e : entries_)
      e.first = std::min(e.first, level - 1);
  }

 protected:
  // Keeps `value` at transaction depth `depth` (> 0).
  void keep(int depth, T value) { entries_.emplace_back(depth, std::move(value)); }
  // The outermost transaction committed: every (depth, entry), in the order kept; none left.
  std::vector<std::pair<int, T>> take_all() { return std::exchange(entries_, {}); }

 private:
  std::vector<std::pair<int, T>> entries_;  // (depth, entry)
};

}  // namespace exactly::detail
