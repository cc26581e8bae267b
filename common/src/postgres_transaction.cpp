// pg::transaction: BEGIN and COMMIT, or a SAVEPOINT inside the open transaction.
#include <exactly/common/postgres.hpp>

#include "commit_hooks.hpp"

#include <libpq-fe.h>

namespace exactly::pg {

transaction::transaction(connection& db, durability d)
    : db_(&db), level_(db.depth_ + 1), durability_(d) {
  if (level_ == 1)
    db.exec("BEGIN");
  else
    db.deferred_.push_back({"SAVEPOINT exactly_" + std::to_string(level_), {}});
  ++db.depth_;
}

transaction::~transaction() {
  if (!done_)
    rollback();
}

void transaction::rollback() noexcept {
  --db_->depth_;
  done_ = true;
  db_->hooks_->rolled_back(level_);
  const std::string sql = level_ == 1 ? std::string("ROLLBACK")
                                      : "ROLLBACK TO SAVEPOINT exactly_" + std::to_string(level_) +
                                            "; RELEASE SAVEPOINT exactly_" + std::to_string(level_);
  // Fails harmlessly when the connection is gone: the server rolls back what it had. So does a
  // deferred statement that fails here, and the rollback is sent all the same.
  std::string deferred;
  try {
    deferred = db_->take_deferred();
  } catch (const std::exception&) {
  }
  PQclear(PQexec(db_->conn_, (deferred + sql).c_str()));
}

void transaction::commit() {
  // One round trip: PQexec answers with the result of the last statement, the COMMIT's.
  const char* commit_sql = durability_ == durability::unflushed
                               ? "SET LOCAL synchronous_commit = off; COMMIT"
                               : "COMMIT";
  if (level_ > 1) {
    db_->deferred_.push_back({"RELEASE SAVEPOINT exactly_" + std::to_string(level_), {}});
    --db_->depth_;
    done_ = true;
    db_->hooks_->released(level_);
    return;
  }
  PGresult* r = PQexec(db_->conn_, (db_->take_deferred() + commit_sql).c_str());
  db_->check(r, "COMMIT");  // on failure the destructor rolls back
  const bool committed = std::string_view(PQcmdStatus(r)) == "COMMIT";
  PQclear(r);
  if (!committed)  // a statement had failed: PostgreSQL answered COMMIT with ROLLBACK
    throw error("40000", "COMMIT: the transaction was rolled back after a failed statement");
  --db_->depth_;
  done_ = true;
  db_->hooks_->committed();
}

}  // namespace exactly::pg
