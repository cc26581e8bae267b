// Deferred statements: sent ahead of the next statement that waits for its answer, in one round
// trip through libpq's pipeline mode (see pg::connection::defer).
#include <exactly/common/postgres.hpp>

#include "postgres_params.hpp"

#include <utility>

#include <libpq-fe.h>

namespace exactly::pg {

result connection::run_after_deferred(const std::string& name, std::string_view sql,
                                      const std::vector<param>& params) {
  return *pipeline(&name, sql, &params);
}

void connection::flush_deferred() {
  pipeline(nullptr, {}, nullptr);
}

std::optional<result> connection::pipeline(const std::string* name, std::string_view sql,
                                           const std::vector<param>* params) {
  // Prepared while nothing is taken from the queue: a failure here leaves it whole.
  std::vector<const std::string*> names;  // of the deferred statements with parameters
  for (const deferred_statement& d : deferred_)
    names.push_back(d.params.empty() ? nullptr : &prepared(d.sql, d.params.size()));
  const std::vector<deferred_statement> before = std::exchange(deferred_, {});
  const auto send = [this](const std::string* prepared_name, const std::string& text,
                           const std::vector<param>& args) {
    if (!prepared_name)
      return PQsendQueryParams(conn_, text.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    const libpq_params b(args);
    return PQsendQueryPrepared(conn_, prepared_name->c_str(), static_cast<int>(args.size()),
                               b.values.data(), b.lengths.data(), b.formats.data(), 0) == 1;
  };
  bool sent = PQenterPipelineMode(conn_) == 1;
  for (std::size_t i = 0; i < before.size(); ++i)
    sent = sent && send(names[i], before[i].sql, before[i].params);
  if (name)
    sent = sent && send(name, std::string(), *params);
  sent = sent && PQpipelineSync(conn_) == 1;
  // Every answer is read, up to the sync, before anything is thrown: the connection leaves
  // pipeline mode as it entered it. A statement after a failed one is answered PIPELINE_ABORTED.
  const std::size_t n = before.size() + (name ? 1 : 0);
  std::vector<PGresult*> answers;  // one per statement, as long as the connection answers
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
  if (PQexitPipelineMode(conn_) != 1 || !sent) {
    broken_ = true;
    up_ = false;
  }
  answers.resize(n, nullptr);
  std::size_t checked = n;  // the first failure, if any
  for (std::size_t i = 0; i < n && checked == n; ++i) {
    const ExecStatusType st = answers[i] ? PQresultStatus(answers[i]) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      checked = i;
  }
  const std::size_t kept = checked < n ? checked : name ? n - 1 : n;
  for (std::size_t i = 0; i < n; ++i) {
    if (i != kept)
      PQclear(answers[i]);
  }
  if (checked < n)  // throws
    check(answers[checked], checked < before.size() ? std::string_view(before[checked].sql) : sql);
  if (!name)
    return std::nullopt;
  return result(answers[kept]);
}

}  // namespace exactly::pg
