#pragma once
// Private: the hooks a connection runs once its outermost transaction commits, by the depth of
// the transaction or savepoint that registered them. Shared by the SQLite and PostgreSQL wrappers.

#include "depth_entries.hpp"

#include <functional>

namespace exactly::detail {

class commit_hooks : public depth_entries<std::function<void()>> {
 public:
  // Registers `fn` at transaction depth `depth`; with none open (0) runs it at once.
  void add(int depth, std::function<void()> fn) {
    if (depth == 0)
      run(fn);
    else
      keep(depth, std::move(fn));
  }
  // The outermost transaction committed: every hook runs, in order of registration.
  void committed() {
    for (const auto& [depth, fn] : take_all())
      run(fn);
  }

 private:
  // A hook that throws would fail a commit that happened: that ends the process instead.
  static void run(const std::function<void()>& fn) noexcept { fn(); }
};

}  // namespace exactly::detail
