// Group commit on the storage thread: one COMMIT (one fsync, unless every member allowed it to be
// unflushed) for the requests queued together.
#include "commit_group.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace exactly::server {

commit_groups::commit_groups(boost::asio::io_context& storage, database db, bool grouped,
                             bool flush_every_commit)
    : io_(storage), db_(db), grouped_(grouped), flush_every_commit_(flush_every_commit) {}

std::shared_ptr<commit_groups::group> commit_groups::join() {
  if (open_ && !db_.in_transaction()) {
    // The engine rolled the group back on its own (disk full, connection lost): nothing more
    // may join.
    return nullptr;
  }
  if (!open_) {
    auto g = std::make_shared<group>(io_);
    try {
      g->tx.emplace(db_);
    } catch (const std::exception& e) {
      spdlog::error("cannot begin a commit group: {}", e.what());
      return nullptr;
    }
    open_ = g;
    if (grouped_) {
      // Runs after every request already queued on the storage thread has joined.
      boost::asio::post(io_, [this, g] { flush(g); });
    }
  }
  ++open_->size;
  return open_;
}

void commit_groups::flush(const std::shared_ptr<group>& g) noexcept {
  if (open_ == g)
    open_.reset();
  const bool flushed = g->must_flush || flush_every_commit_;
  try {
    if (db_.in_transaction()) {
      if (flushed)
        g->tx->commit();
      else
        g->tx->commit_unflushed();
      g->committed_ok = true;
    }
  } catch (const std::exception& e) {
    spdlog::error("commit of a group of {} requests failed, none is answered: {}", g->size,
                  e.what());
  }
  g->tx.reset();
  if (g->committed_ok) {
    ++stats_.groups;
    if (!flushed)
      ++stats_.unflushed;
    stats_.requests += g->size;
    stats_.largest = std::max(stats_.largest, g->size);
  } else {
    ++stats_.failures;
  }
  g->committed.cancel();
}

}  // namespace exactly::server
