// pg::transaction: BEGIN and COMMIT, or a SAVEPOINT inside the open transaction.
#include <exactly/common/postgres.hpp>

#include "commit_hooks.hpp"
#include "commit_tallies.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <iterator>
#include <memory>

namespace exactly::pg {
namespace {

// The BEGIN (level 1) or SAVEPOINT `name` that opened a transaction, in `queued` if it is not
// sent yet; queued.end() once it went out.
std::vector<statement>::iterator unsent_opening(std::vector<statement>& queued, int level,
                                                const std::string& name) {
  const std::string opening = level == 1 ? "BEGIN" : "SAVEPOINT " + name;
  return std::find_if(queued.begin(), queued.end(),
                      [&](const statement& q) { return !q.prepared && q.sql == opening; });
}

}  // namespace

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
  if (level_ == 1)
    db_->aborted_by_.reset();
  db_->hooks_->rolled_back(level_);
  db_->tallies_->rolled_back(level_);
  // What this transaction deferred is dropped, never sent: queued statements are this level's
  // or deeper ones', since a BEGIN or SAVEPOINT sent took every statement before it along.
  std::vector<statement>& queued = db_->deferred_;
  const auto own = unsent_opening(queued, level_, savepoint_);
  const bool sent = own == queued.end();
  const auto from = sent ? queued.begin() : own;
  // A savepoint released later goes with it when this rolls back what it had queued (this is
  // its enclosing transaction): rolled back too, and no news to its owner beyond this one's.
  if (db_->later_ && static_cast<std::size_t>(from - queued.begin()) < db_->later_->statements)
    db_->later_.reset();
  queued.erase(from, queued.end());
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

void transaction::commit_later(std::function<void(std::exception_ptr)> on_failed) {
  connection& db = *db_;
  const bool opened =
      level_ > 1 && unsent_opening(db.deferred_, level_, savepoint_) == db.deferred_.end();
  // Every statement queued now is this savepoint's (its SAVEPOINT went out ahead of them), and
  // any savepoint released later before it went out with that round trip.
  if (!opened || db.later_) {
    commit();
    return;
  }
  db.fail_if_broken();
  db.deferred_.push_back({"RELEASE SAVEPOINT " + savepoint_, {}, false});
  auto dropped = std::make_shared<bool>(false);
  db.later_ = connection::later_release{savepoint_, db.deferred_.size(),
                                        level_,     db.tallies_->from_level(level_),
                                        dropped,    std::move(on_failed)};
  --db.depth_;
  done_ = true;
  db.hooks_->released_unless(level_, dropped);
  db.tallies_->released(level_);
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
  // A savepoint released later goes with the COMMIT: what it tallied is recorded inside it,
  // ahead of its RELEASE, so that its failure takes that back with it.
  if (connection::later_release* later = db_->later_ ? &*db_->later_ : nullptr;
      later && !later->tallies.empty()) {
    tally_totals own{};
    for (const auto& [slot, delta] : later->tallies) {
      own[slot] += delta;
      db_->tallies_->add(level_, slot, -delta);  // out of the transaction's own totals
    }
    later->tallies.clear();
    // The recorder defer()s into an empty queue, the savepoint set aside meanwhile.
    std::vector<statement> queued = std::exchange(db_->deferred_, {});
    std::optional<connection::later_release> held = std::exchange(db_->later_, std::nullopt);
    if (db_->record_tallies_)
      db_->record_tallies_(*db_, own);
    db_->later_ = std::move(held);
    later = &*db_->later_;
    std::vector<statement> records = std::exchange(db_->deferred_, std::move(queued));
    const auto release =
        db_->deferred_.begin() + static_cast<std::ptrdiff_t>(later->statements - 1);
    db_->deferred_.insert(release, std::make_move_iterator(records.begin()),
                          std::make_move_iterator(records.end()));
    later->statements += records.size();
  }
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
