#pragma once
// Private: the hooks a connection runs once its outermost transaction commits, by the depth of
// the transaction or savepoint that registered them. Shared by the SQLite and PostgreSQL wrappers.

#include "depth_entries.hpp"

#include <functional>
#include <memory>

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
  // The savepoint at `level` (> 1) was released, but may yet roll back on its own
  // (pg::transaction::commit_later): its hooks now belong to the enclosing level, each run only
  // while `*dropped` is false.
  void released_unless(int level, const std::shared_ptr<const bool>& dropped) {
    for_each_from(level, [&](std::function<void()>& fn) {
      fn = [dropped, inner = std::move(fn)] {
        if (!*dropped)
          inner();
      };
    });
    released(level);
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
