#pragma once
// Handler attempts' savepoints released with the next round trip (PostgreSQL; at once on SQLite):
// one round trip less per handler. The statements the handler waited for have answered by then;
// what can fail there is a write sent with the RELEASE (the runtime's, or one the handler
// deferred itself), and that fails the whole batch, never the handler alone: the batch must not
// commit without the savepoint.

#include <exactly/common/database.hpp>

#include <exception>
#include <memory>

namespace exactly::client {

class later_releases {
 public:
  // Commits `attempt`, a handler attempt's savepoint. If a statement of it fails in the round
  // trip that carries its RELEASE, the error is thrown to whatever made that round trip.
  void release(database_transaction& attempt) {
    attempt.commit_later([failed = failed_](std::exception_ptr e) {
      *failed = e;
      std::rethrow_exception(e);
    });
  }
  // Before the batch commits: throws the failure of a savepoint released later, also one that a
  // later handler caught and went on from.
  void throw_if_failed() const {
    if (*failed_)
      std::rethrow_exception(*failed_);
  }

 private:
  std::shared_ptr<std::exception_ptr> failed_ = std::make_shared<std::exception_ptr>();
};

}  // namespace exactly::client
