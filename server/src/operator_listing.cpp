// The operator page's listings, read with one bounded query each on either engine (see
// operator_page.hpp).
#include "operator_page.hpp"

#include <functional>

namespace exactly::server {
namespace {

// One row of a result, on either engine.
class row {
 public:
  explicit row(const sqlite::statement& s) : s_(&s) {}
  row(const pg::result& r, int i) : r_(&r), i_(i) {}
  bool is_null(int c) const { return s_ ? s_->is_null(c) : r_->is_null(i_, c); }
  std::int64_t int64(int c) const { return s_ ? s_->int64(c) : r_->int64(i_, c); }
  std::string text(int c) const {
    if (is_null(c))
      return {};
    return s_ ? s_->text(c) : r_->text(i_, c);
  }

 private:
  const sqlite::statement* s_ = nullptr;
  const pg::result* r_ = nullptr;
  int i_ = 0;
};

// Calls `fn` with each row `sql` (with ? placeholders) selects with `args` bound.
template <class... A>
void for_each_row(const database& db, std::string_view sql,
                  const std::function<void(const row&)>& fn, const A&... args) {
  if (db.kind() == engine::sqlite) {
    sqlite::statement& q = db.as_sqlite().prepare(sql);
    q.bind_all(args...);
    try {
      while (q.step())
        fn(row(q));
    } catch (...) {
      q.reset();
      throw;
    }
    q.reset();
    return;
  }
  const pg::result r = db.as_postgres().query(numbered_placeholders(sql), args...);
  for (int i = 0; i < r.rows(); ++i)
    fn(row(r, i));
}

// The interactions in `state` (of the filter's owner), at most `limit`.
listing<interaction_row> interactions(const database& db, const operator_view& v, int state) {
  const auto limit = static_cast<std::int64_t>(v.max_rows);
  const bool oldest_first = state == 1;
  const std::string order =
      oldest_first ? " ORDER BY state_since_ms" : " ORDER BY state_since_ms DESC";
  const std::string columns =
      "SELECT route, id, owner, state, state_since_ms, response_status FROM exactly_interactions"
      " WHERE state = ?";
  listing<interaction_row> out;
  auto add = [&out](const row& r) {
    interaction_row i{r.text(0),  r.text(1),   r.text(2), static_cast<int>(r.int64(3)),
                      r.int64(4), std::nullopt};
    if (!r.is_null(5))
      i.response_status = static_cast<int>(r.int64(5));
    out.rows.push_back(std::move(i));
  };
  const std::int64_t s = state;
  if (v.filter.owner.empty()) {
    for_each_row(db, columns + order + " LIMIT ?", add, s, limit);
    const state_counts& c = v.figures.rows;
    out.total = state == 1 ? c.staged : state == 2 ? c.executed : c.tombstone;
  } else {
    for_each_row(db, columns + " AND owner = ?" + order + " LIMIT ?", add, s, v.filter.owner,
                 limit);
    out.total =
        db.query_int64("SELECT count(*) FROM exactly_interactions WHERE owner = ? AND state = ?",
                       v.filter.owner, s)
            .value_or(0);
  }
  return out;
}

}  // namespace

void read_operator_listings(const database& db, const storage_figures& figures, operator_view& v) {
  const auto limit = static_cast<std::int64_t>(v.max_rows);
  if (v.filter.state) {
    v.interactions.push_back({*v.filter.state, interactions(db, v, *v.filter.state)});
  } else {
    v.interactions.push_back({1, interactions(db, v, 1)});
    v.interactions.push_back({2, interactions(db, v, 2)});
  }
  for_each_row(
      db,
      "SELECT seq, type, source, created_ms, attempts, next_attempt_ms, last_error"
      " FROM exactly_server_outbox ORDER BY seq LIMIT ?",
      [&v](const row& r) {
        v.outbox.rows.push_back(outbox_row{r.int64(0), r.text(1), r.text(2), r.int64(3), r.int64(4),
                                           r.int64(5), r.text(6)});
      },
      limit);
  v.outbox.total = figures.outbox_pending;
  for_each_row(
      db,
      "SELECT seq, type, source, created_ms, attempts, error, failed_ms"
      " FROM exactly_server_dead_letters ORDER BY seq DESC LIMIT ?",
      [&v](const row& r) {
        v.dead_letters.rows.push_back(dead_letter_row{r.int64(0), r.text(1), r.text(2), r.int64(3),
                                                      r.int64(4), r.text(5), r.int64(6)});
      },
      limit);
  v.dead_letters.total = figures.dead_letters;
}

}  // namespace exactly::server
