// Deferred statements: sent in the round trip of the next statement that waits for its answer,
// through libpq's pipeline mode, or ahead of a simple query (see pg::connection::defer).
#include <exactly/common/postgres.hpp>

#include "postgres_params.hpp"

#include <algorithm>
#include <utility>

#include <libpq-fe.h>

namespace exactly::pg {

result connection::run_after_deferred(const std::string& name, std::string_view sql,
                                      const std::vector<param>& params) {
  const std::vector<deferred_statement> before = std::exchange(deferred_, {});
  std::vector<const std::string*> names;  // of the deferred statements with parameters
  for (const deferred_statement& d : before)
    names.push_back(d.params.empty() ? nullptr : &prepared(d.sql, d.params.size()));
  const auto send = [this](const std::string* name, const std::string& sql,
                           const std::vector<param>& params) {
    if (!name)
      return PQsendQueryParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    const libpq_params b(params);
    return PQsendQueryPrepared(conn_, name->c_str(), static_cast<int>(params.size()),
                               b.values.data(), b.lengths.data(), b.formats.data(), 0) == 1;
  };
  bool sent = PQenterPipelineMode(conn_) == 1;
  for (std::size_t i = 0; i < before.size(); ++i)
    sent = sent && send(names[i], before[i].sql, before[i].params);
  sent = sent && send(&name, std::string(), params) && PQpipelineSync(conn_) == 1;
  // Every answer is read, up to the sync, before anything is thrown: the connection leaves
  // pipeline mode as it entered it. A statement after a failed one is answered PIPELINE_ABORTED.
  const std::size_t n = before.size() + 1;
  std::vector<PGresult*> answers;  // one per statement, as long as the connection answers
  while (sent && answers.size() < n) {
    PGresult* r = PQgetResult(conn_);
    if (!r)
      break;
    answers.push_back(r);
    while (PGresult* end = PQgetResult(conn_))  // a statement's answer ends with a null
      PQclear(end);
  }
  while (PGresult* r = answers.size() == n ? PQgetResult(conn_) : nullptr) {
    const bool synced = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    PQclear(r);
    if (synced)
      break;
  }
  // Answers missing (the connection broke off): nothing more runs on it in this transaction, and
  // ensure_connected() resets it once the transaction has unwound.
  if (PQexitPipelineMode(conn_) != 1)
    up_ = false;
  answers.resize(n, nullptr);
  std::size_t checked = n - 1;  // the answer checked: the first failure, else the statement's
  for (std::size_t i = 0; i + 1 < n && checked == n - 1; ++i) {
    const ExecStatusType st = answers[i] ? PQresultStatus(answers[i]) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      checked = i;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i != checked)
      PQclear(answers[i]);
  }
  check(answers[checked], checked + 1 < n ? std::string_view(before[checked].sql) : sql);
  return result(answers[checked]);
}

std::string connection::take_deferred() {
  // A statement with parameters cannot lead a simple query: it goes out, with those before it,
  // in a round trip of its own.
  const auto with_params =
      std::find_if(deferred_.rbegin(), deferred_.rend(),
                   [](const deferred_statement& d) { return !d.params.empty(); });
  if (with_params != deferred_.rend()) {
    std::vector<deferred_statement> after(std::make_move_iterator(with_params.base()),
                                          std::make_move_iterator(deferred_.end()));
    deferred_.erase(with_params.base(), deferred_.end());
    deferred_statement last = std::move(deferred_.back());
    deferred_.pop_back();
    run(last.sql, std::move(last.params));
    deferred_ = std::move(after);
  }
  std::string sql;
  for (const deferred_statement& d : deferred_)
    sql += d.sql + "; ";
  deferred_.clear();
  return sql;
}

}  // namespace exactly::pg
