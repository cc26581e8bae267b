// The operator page's listings through the inspection API (see operator_page.hpp).
#include "operator_page.hpp"

#include <algorithm>
#include <limits>

namespace exactly::server {
namespace {

// The interactions in `s` (of the filter's owner), at most max_rows.
listing<inspect::interaction_summary> interactions(const database& db, const operator_view& v,
                                                   inspect::state s) {
  inspect::interaction_filter f;
  f.only_state = s;
  if (!v.filter.owner.empty())
    f.owner = v.filter.owner;
  f.now_ms = v.now_ms;
  f.limit = static_cast<int>(std::min<std::size_t>(v.max_rows, std::numeric_limits<int>::max()));
  f.oldest_first = s == inspect::state::staged;
  listing<inspect::interaction_summary> out;
  out.rows = inspect::list_interactions(db, f);
  if (v.filter.owner.empty()) {
    const state_counts& c = v.figures.rows;
    out.total = s == inspect::state::staged     ? c.staged
                : s == inspect::state::executed ? c.executed
                                                : c.tombstone;
  } else {  // one index range: exactly_interactions_by_owner(owner, state)
    out.total =
        db.query_int64("SELECT count(*) FROM exactly_interactions WHERE owner = ? AND state = ?",
                       v.filter.owner, static_cast<std::int64_t>(s))
            .value_or(0);
  }
  return out;
}

}  // namespace

void read_operator_listings(const database& db, const storage_figures& figures, operator_view& v) {
  const int limit =
      static_cast<int>(std::min<std::size_t>(v.max_rows, std::numeric_limits<int>::max()));
  if (v.filter.state) {
    v.interactions.push_back({*v.filter.state, interactions(db, v, *v.filter.state)});
  } else {
    for (const inspect::state s : {inspect::state::staged, inspect::state::executed})
      v.interactions.push_back({s, interactions(db, v, s)});
  }
  v.outbox.rows = inspect::list_outbox(db, limit);
  v.outbox.total = figures.outbox_pending;
  v.dead_letters.rows = inspect::list_dead_letters(db, limit);
  v.dead_letters.total = figures.dead_letters;
}

}  // namespace exactly::server
