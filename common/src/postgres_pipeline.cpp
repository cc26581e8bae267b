// Statements sent together: the deferred ones and those that wait for their answers, in one
// round trip through libpq's pipeline mode (see pg::connection::defer and query_together).
#include <exactly/common/postgres.hpp>

#include "commit_tallies.hpp"
#include "postgres_params.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include <libpq-fe.h>

namespace exactly::pg {

void connection::flush_deferred() {
  pipeline({});
}

std::vector<result> connection::query_together(std::vector<statement> statements) {
  if (depth_ == 0)
    ensure_connected();
  fail_if_broken();
  return pipeline(std::move(statements));
}

std::vector<result> connection::pipeline(std::vector<statement> wanted) {
  std::vector<statement> all = std::exchange(deferred_, {});
  std::optional<later_release> later = std::exchange(later_, std::nullopt);  // sent now
  const std::size_t first_wanted = all.size();
  for (statement& w : wanted)
    all.push_back(std::move(w));
  // Each prepared statement is parsed in its place the first time (after the SAVEPOINT ahead of
  // it, so a failed Parse fails inside the request's savepoint), and named once it passed.
  struct plan {
    std::string name;  // empty: unnamed
    bool parse = false;
  };
  std::vector<plan> plans(all.size());
  std::unordered_map<std::string, std::string> parsing;  // sql -> name, parsed in this trip
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!all[i].prepared)
      continue;
    if (const auto known = prepared_.find(all[i].sql); known != prepared_.end()) {
      plans[i].name = known->second;
    } else if (const auto p = parsing.find(all[i].sql); p != parsing.end()) {
      plans[i].name = p->second;
    } else {
      plans[i] = {"exactly_" + std::to_string(prepared_.size() + parsing.size() + 1), true};
      parsing.emplace(all[i].sql, plans[i].name);
    }
  }
  // Until the connection has left pipeline mode cleanly, it counts as broken (a throw in
  // between leaves it so).
  broken_ = true;
  bool sent = PQenterPipelineMode(conn_) == 1;
  std::vector<std::size_t> of_answer;  // the statement each answer is for (a Parse's too)
  for (std::size_t i = 0; i < all.size() && sent; ++i) {
    const statement& s = all[i];
    const int n = static_cast<int>(s.params.size());
    if (plans[i].parse) {
      sent = PQsendPrepare(conn_, plans[i].name.c_str(), s.sql.c_str(), n, nullptr) == 1;
      of_answer.push_back(i);
    }
    const libpq_params b(s.params);
    sent = sent && (plans[i].name.empty()
                        ? PQsendQueryParams(conn_, s.sql.c_str(), n, nullptr, b.values.data(),
                                            b.lengths.data(), b.formats.data(), 0)
                        : PQsendQueryPrepared(conn_, plans[i].name.c_str(), n, b.values.data(),
                                              b.lengths.data(), b.formats.data(), 0)) == 1;
    of_answer.push_back(i);
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  // Every answer is read, up to the sync, before anything is thrown: the connection leaves
  // pipeline mode as it entered it. A statement after a failed one is answered PIPELINE_ABORTED.
  const std::size_t n = of_answer.size();
  std::vector<PGresult*> answers;  // one per Parse or statement, as long as the connection answers
  answers.reserve(n);
  while (sent && answers.size() < n) {
    PGresult* r = PQgetResult(conn_);
    if (!r)
      break;
    answers.push_back(r);
    while (PGresult* end = PQgetResult(conn_))  // a statement's answer ends with a null
      PQclear(end);
  }
  while (PGresult* r = sent && answers.size() == n ? PQgetResult(conn_) : nullptr) {
    const bool synced = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    PQclear(r);
    if (synced)
      break;
  }
  // Not all sent, or answers missing: nothing more runs on the connection in this transaction,
  // and ensure_connected() resets it once the transaction has unwound.
  broken_ = PQexitPipelineMode(conn_) != 1 || !sent;
  if (broken_)
    up_ = false;
  answers.resize(n, nullptr);
  std::size_t failed = n;  // the first failure, if any
  for (std::size_t a = 0; a < n && failed == n; ++a) {
    const ExecStatusType st = answers[a] ? PQresultStatus(answers[a]) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      failed = a;
  }
  if (failed > 0)
    aborted_by_.reset();  // a statement ran: the transaction was not aborted from then on
  // Prepared statements outlive a failed execution and a rollback: named once their Parse
  // passed (those ahead of the first failure).
  std::vector<result> out;
  out.reserve(all.size() - first_wanted);
  for (std::size_t a = 0; a < n; ++a) {
    const std::size_t i = of_answer[a];
    const bool parse = plans[i].parse && a + 1 < n && of_answer[a + 1] == i;
    if (parse && a < failed)
      prepared_.emplace(all[i].sql, plans[i].name);
    if (a == failed)
      continue;  // thrown below
    if (!parse && i >= first_wanted && failed == n)
      out.emplace_back(answers[a]);
    else
      PQclear(answers[a]);
  }
  if (failed < n && later && !broken_ && of_answer[failed] < later->statements) {
    const std::string sql = all[of_answer[failed]].sql;
    return again_without(std::move(*later), answers[failed], sql, std::move(all), first_wanted);
  }
  if (failed < n)  // throws
    check(answers[failed], all[of_answer[failed]].sql, of_answer[failed] < first_wanted);
  return out;
}

std::vector<result> connection::again_without(later_release later, PGresult* why,
                                              std::string_view sql, std::vector<statement> all,
                                              std::size_t first_wanted) {
  std::exception_ptr error;
  try {
    check(why, sql, true);  // throws: a statement of the savepoint released later
  } catch (...) {
    error = std::current_exception();
  }
  // Nothing ran after the failed statement, its savepoint's RELEASE included: the savepoint is
  // rolled back ahead of the statements after it, sent again.
  const auto begin = std::make_move_iterator(all.begin());
  deferred_ = {{"ROLLBACK TO SAVEPOINT " + later.savepoint, {}, false},
               {"RELEASE SAVEPOINT " + later.savepoint, {}, false}};
  deferred_.insert(deferred_.end(), begin + static_cast<std::ptrdiff_t>(later.statements),
                   begin + static_cast<std::ptrdiff_t>(first_wanted));
  std::vector<statement> wanted(begin + static_cast<std::ptrdiff_t>(first_wanted),
                                std::make_move_iterator(all.end()));
  const int level = std::clamp(later.level - 1, 1, std::max(depth_, 1));
  for (const auto& [slot, delta] : later.tallies)
    tallies_->add(level, slot, -delta);
  *later.hooks_dropped = true;
  if (later.on_failed)
    later.on_failed(error);
  return pipeline(std::move(wanted));
}

}  // namespace exactly::pg
