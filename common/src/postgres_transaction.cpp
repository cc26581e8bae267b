// pg::transaction: BEGIN and COMMIT, or a SAVEPOINT inside the open transaction.
#include <exactly/common/postgres.hpp>

#include "commit_hooks.hpp"

#include <libpq-fe.h>

#include <algorithm>

namespace exactly::pg {

transaction::transaction(connection& db, durability d)
    : db_(&db), level_(db.depth_ + 1), durability_(d) {
  if (level_ == 1) {
    db.exec("BEGIN");
  } else {
    // A name of its own: a ROLLBACK TO can only ever reach this savepoint.
    savepoint_ = "exactly_" + std::to_string(++db.savepoints_);
    db.deferred_.push_back({"SAVEPOINT " + savepoint_, {}});  // sent with the next statement
  }
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
  // What this transaction deferred is dropped, never sent: queued statements are this level's
  // or deeper ones', since a SAVEPOINT sent took every statement before it along.
  std::vector<connection::deferred_statement>& queued = db_->deferred_;
  const auto own = std::find_if(queued.begin(), queued.end(), [this](const auto& q) {
    return q.params.empty() && q.sql == "SAVEPOINT " + savepoint_;
  });
  const bool sent = level_ == 1 || own == queued.end();
  queued.erase(sent ? queued.begin() : own, queued.end());
  if (db_->broken_) {
    // The backend may still hold this transaction's locks: at the outermost level the
    // connection is reset now (a reconnection that fails is tried again at the next use).
    if (level_ == 1) {
      try {
        db_->ensure_connected();
      } catch (const std::exception&) {
      }
    }
    return;
  }
  if (!sent)
    return;  // nothing of it reached the server
  const std::string sql =
      level_ == 1 ? std::string("ROLLBACK")
                  : "ROLLBACK TO SAVEPOINT " + savepoint_ + "; RELEASE SAVEPOINT " + savepoint_;
  // Fails harmlessly when the connection is gone: the server rolls back what it had.
  PQclear(PQexec(db_->conn_, sql.c_str()));
}

void transaction::commit() {
  if (level_ > 1) {
    // Sent now (after anything deferred), not deferred: a savepoint of a failed transaction
    // must fail here, in its own request, as RELEASE does.
    db_->exec("RELEASE SAVEPOINT " + savepoint_);
    --db_->depth_;
    done_ = true;
    db_->hooks_->released(level_);
    return;
  }
  db_->fail_if_broken();
  if (!db_->deferred_.empty())
    db_->flush_deferred();
  // One round trip: PQexec answers with the result of the last statement, the COMMIT's.
  const char* commit_sql = durability_ == durability::unflushed
                               ? "SET LOCAL synchronous_commit = off; COMMIT"
                               : "COMMIT";
  PGresult* r = PQexec(db_->conn_, commit_sql);
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
