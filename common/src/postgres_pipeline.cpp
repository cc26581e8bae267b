// Deferred statements: sent ahead of the next statement that waits for its answer, in one round
// trip through libpq's pipeline mode (see pg::connection::defer).
#include <exactly/common/postgres.hpp>

#include "postgres_params.hpp"

#include <utility>

#include <libpq-fe.h>

namespace exactly::pg {

void connection::flush_deferred() {
  pipeline({}, nullptr);
}

std::optional<result> connection::pipeline(std::string_view sql, const std::vector<param>* params) {
  const std::vector<deferred_statement> before = std::exchange(deferred_, {});
  // The statement that waits for its answer is prepared in the same round trip, after the
  // deferred ones, the first time: a failed Parse then fails inside the request's savepoint.
  const auto known = params ? prepared_.find(std::string(sql)) : prepared_.end();
  const bool prepare = params && known == prepared_.end();
  const std::string name = !params   ? std::string()
                           : prepare ? next_statement_name()
                                     : known->second;
  // Until the connection has left pipeline mode cleanly, it counts as broken (a throw in
  // between leaves it so).
  broken_ = true;
  bool sent = PQenterPipelineMode(conn_) == 1;
  for (const deferred_statement& d : before) {  // unnamed: nothing to prepare ahead of them
    const libpq_params b(d.params);
    sent =
        sent && PQsendQueryParams(conn_, d.sql.c_str(), static_cast<int>(d.params.size()), nullptr,
                                  b.values.data(), b.lengths.data(), b.formats.data(), 0) == 1;
  }
  const std::string text(sql);
  if (prepare) {
    sent = sent && PQsendPrepare(conn_, name.c_str(), text.c_str(),
                                 static_cast<int>(params->size()), nullptr) == 1;
  }
  if (params) {
    const libpq_params b(*params);
    sent = sent && PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(params->size()),
                                       b.values.data(), b.lengths.data(), b.formats.data(), 0) == 1;
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  // Every answer is read, up to the sync, before anything is thrown: the connection leaves
  // pipeline mode as it entered it. A statement after a failed one is answered PIPELINE_ABORTED.
  const std::size_t n = before.size() + (prepare ? 1 : 0) + (params ? 1 : 0);
  std::vector<PGresult*> answers;  // one per statement, as long as the connection answers
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
  std::size_t checked = n;  // the first failure, if any
  for (std::size_t i = 0; i < n && checked == n; ++i) {
    const ExecStatusType st = answers[i] ? PQresultStatus(answers[i]) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      checked = i;
  }
  // Prepared statements outlive a failed execution and a rollback: named once its Parse passed.
  const std::size_t parse = before.size();
  if (prepare && answers[parse] && PQresultStatus(answers[parse]) == PGRES_COMMAND_OK)
    prepared_.emplace(text, name);
  const std::size_t kept = checked < n ? checked : params ? n - 1 : n;
  for (std::size_t i = 0; i < n; ++i) {
    if (i != kept)
      PQclear(answers[i]);
  }
  if (checked < n)  // throws
    check(answers[checked], checked < before.size() ? std::string_view(before[checked].sql) : sql);
  if (!params)
    return std::nullopt;
  return result(answers[kept]);
}

}  // namespace exactly::pg
