// Journaled ids of attempts that ended without committing, turned into DELETEs (see
// orphan_recovery.hpp).
#include "orphan_recovery.hpp"

#include "attempt_liveness.hpp"

#include <optional>

namespace exactly::client {
namespace {

using state = invocation_state;

// Journal entries read at once by recover_orphans().
constexpr int orphans_page = 64;

}  // namespace

std::size_t recover_orphans(endpoint_core& core, std::int64_t now) {
  const std::int64_t every = core.opts.orphan_grace.count() / 4;
  if (const auto last = core.orphans_read_ms; last && now >= *last && now - *last < every)
    return 0;
  const auto entries =
      core.journal.older_than(core.name, now - core.opts.orphan_grace.count(), orphans_page);
  core.orphans_read_ms =
      entries.size() < orphans_page ? std::optional<std::int64_t>(now) : std::nullopt;
  if (entries.empty())
    return 0;
  // An id whose attempt has ended (on SQLite: holding the write lock, no handler is between its
  // PUT and its commit or rollback; on PostgreSQL: the attempt's advisory lock is free) and that
  // is not in the invocations table now belongs to an attempt that ended without committing.
  // Entries of attempts still running stay in the journal.
  const bool cleanup = on_event(state::put_sent, lifecycle_event::attempt_abandoned).action ==
                       lifecycle_action::queue_cleanup_delete;
  std::size_t orphans = 0;
  std::vector<journal_entry> ended;
  database_transaction tx(core.db);
  for (const journal_entry& e : entries) {
    if (!attempt_ended(core.db, e.request_id))
      continue;
    ended.push_back(e);
    if (cleanup && !core.invocations.contains(e.request_id)) {
      core.invocations.add_cleanup(e.request_id, core.name, e.url, now);
      ++orphans;
    }
  }
  tx.commit();
  core.journal.forget(ended);
  return orphans;
}

}  // namespace exactly::client
