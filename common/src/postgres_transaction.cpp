// pg::transaction: BEGIN and COMMIT, or a SAVEPOINT inside the open transaction.
#include <exactly/common/postgres.hpp>

#include "commit_hooks.hpp"
#include "commit_tallies.hpp"

#include <libpq-fe.h>

#include <algorithm>

namespace exactly::pg {

transaction::transaction(connection& db, durability d)
    : db_(&db), level_(db.depth_ + 1), durability_(d) {
  if (level_ == 1) {
    db.ensure_connected();
    db.fail_if_broken();
    db.deferred_.push_back({"BEGIN", {}, false});  // sent with the first statement
  } else {
    // A name of its own: a ROLLBACK TO can only ever reach this savepoint.
    savepoint_ = "exactly_" + std::to_string(++db.savepoints_);
    db.deferred_.push_back({"SAVEPOINT " + savepoint_, {}, false});  // sent with the next one
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
  db_->tallies_->rolled_back(level_);
  // What this transaction deferred is dropped, never sent: queued statements are this level's
  // or deeper ones', since a BEGIN or SAVEPOINT sent took every statement before it along.
  std::vector<statement>& queued = db_->deferred_;
  const std::string opening = level_ == 1 ? "BEGIN" : "SAVEPOINT " + savepoint_;
  const auto own = std::find_if(queued.begin(), queued.end(), [&](const statement& q) {
    return !q.prepared && q.sql == opening;
  });
  const bool sent = own == queued.end();
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
  if (level_ > 1) {
    // Sent with the next round trip, ahead of anything after it (and reported there if it
    // fails): a savepoint's rollback is news to no one.
    queued.push_back({"ROLLBACK TO SAVEPOINT " + savepoint_, {}, false});
    queued.push_back({"RELEASE SAVEPOINT " + savepoint_, {}, false});
    return;
  }
  // Fails harmlessly when the connection is gone: the server rolls back what it had.
  PQclear(PQexec(db_->conn_, "ROLLBACK"));
}

void transaction::commit() {
  if (level_ > 1) {
    // Sent now (with anything deferred), not deferred: a savepoint of a failed transaction
    // must fail here, in its own request, as RELEASE does.
    db_->fail_if_broken();
    db_->pipeline({{"RELEASE SAVEPOINT " + savepoint_, {}, false}});
    --db_->depth_;
    done_ = true;
    db_->hooks_->released(level_);
    db_->tallies_->released(level_);
    return;
  }
  db_->fail_if_broken();
  // What the transaction tallied is recorded by statements in its COMMIT's round trip.
  if (const auto totals = db_->tallies_->take(); totals && db_->record_tallies_)
    db_->record_tallies_(*db_, *totals);
  // One round trip, with anything deferred (on failure the destructor rolls back).
  if (durability_ == durability::unflushed)
    db_->deferred_.push_back({"SET LOCAL synchronous_commit = off", {}, false});
  const std::vector<result> r = db_->pipeline({{"COMMIT", {}, false}});
  if (r.front().command() != "COMMIT")  // a statement had failed: PostgreSQL answered ROLLBACK
    throw error("40000", "COMMIT: the transaction was rolled back after a failed statement");
  --db_->depth_;
  done_ = true;
  db_->hooks_->committed();
}

}  // namespace exactly::pg
