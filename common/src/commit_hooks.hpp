#pragma once
// Private: the hooks a connection runs once its outermost transaction commits, by the depth of
// the transaction or savepoint that registered them. Shared by the SQLite and PostgreSQL wrappers.

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace exactly::detail {

class commit_hooks {
 public:
  // Registers `fn` at transaction depth `depth`; with none open (0) runs it at once.
  void add(int depth, std::function<void()> fn) {
    if (depth == 0)
      run(fn);
    else
      hooks_.emplace_back(depth, std::move(fn));
  }
  // The transaction or savepoint at `level` rolled back: its hooks and deeper ones are dropped.
  void rolled_back(int level) {
    std::erase_if(hooks_, [level](const auto& h) { return h.first >= level; });
  }
  // The savepoint at `level` (> 1) was released: its hooks now wait for the enclosing level.
  void released(int level) {
    for (auto& h : hooks_)
      h.first = std::min(h.first, level - 1);
  }
  // The outermost transaction committed: every hook runs, in order of registration.
  void committed() {
    auto hooks = std::move(hooks_);
    hooks_.clear();
    for (auto& h : hooks)
      run(h.second);
  }

 private:
  // A hook that throws would fail a commit that happened: that ends the process instead.
  static void run(const std::function<void()>& fn) noexcept { fn(); }

  std::vector<std::pair<int, std::function<void()>>> hooks_;  // (depth, hook)
};

}  // namespace exactly::detail
