// The libpq wrapper: connection, prepared statements, results, transactions, reconnection.
#include <exactly/common/backoff.hpp>
#include <exactly/common/postgres.hpp>

#include "commit_hooks.hpp"
#include "commit_tallies.hpp"
#include "postgres_params.hpp"

#include <charconv>
#include <cstring>

#include <libpq-fe.h>

namespace exactly::pg {
namespace {

constexpr std::string_view connection_lost = "08006";
// "current transaction is aborted, commands ignored until end of transaction block".
constexpr std::string_view in_failed_transaction = "25P02";

}  // namespace

param to_param(std::int64_t v) {
  return {std::to_string(v), false, false};
}
param to_param(std::string_view text) {
  return {std::string(text), false, false};
}
param to_param(std::nullptr_t) {
  return {std::string(), true, false};
}
param to_param(bytes b) {
  return {std::string(b.data), false, true};
}

// ---- result ----

result::~result() {
  PQclear(r_);
}

int result::rows() const {
  return PQntuples(r_);
}

bool result::is_null(int row, int col) const {
  return PQgetisnull(r_, row, col) != 0;
}

std::int64_t result::int64(int row, int col) const {
  const char* v = PQgetvalue(r_, row, col);
  std::int64_t out = 0;
  std::from_chars(v, v + std::strlen(v), out);
  return out;
}

std::string result::text(int row, int col) const {
  const char* v = PQgetvalue(r_, row, col);
  const std::size_t n = static_cast<std::size_t>(PQgetlength(r_, row, col));
  if (PQftype(r_, col) != 17 /* bytea */)
    return std::string(v, n);
  std::size_t len = 0;
  unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(v), &len);
  if (!raw)
    throw error("53200", "out of memory decoding bytea");
  std::string out(reinterpret_cast<const char*>(raw), len);
  PQfreemem(raw);
  return out;
}

std::int64_t result::affected() const {
  const char* n = PQcmdTuples(r_);
  std::int64_t out = 0;
  std::from_chars(n, n + std::strlen(n), out);
  return out;
}

std::string_view result::command() const {
  return PQcmdStatus(r_);
}

// ---- connection ----

connection::connection(options opts)
    : opts_(std::move(opts)),
      hooks_(std::make_unique<detail::commit_hooks>()),
      tallies_(std::make_unique<detail::commit_tallies>()) {
  conn_ = PQconnectdb(opts_.conninfo.c_str());
  if (!conn_)
    throw error("53200", "cannot connect to PostgreSQL: out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string why = PQerrorMessage(conn_);
    PQfinish(conn_);
    conn_ = nullptr;
    throw error(connection_lost, "cannot connect to PostgreSQL: " + why);
  }
  // Notices and the server's goodbye on shutdown ("terminating connection") are not errors of
  // ours; a lost connection surfaces as an error at the next statement.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  try {
    configure();
  } catch (...) {
    PQfinish(conn_);  // and whatever the session had taken
    conn_ = nullptr;
    throw;
  }
}

connection::~connection() {
  PQfinish(conn_);
}

void connection::configure() {
  prepared_.clear();
  deferred_.clear();
  broken_ = false;
  exec(opts_.synchronous_commit ? "SET synchronous_commit = on" : "SET synchronous_commit = off");
  // Notices (e.g. "relation already exists, skipping") are not worth a line on stderr.
  exec("SET client_min_messages = warning");
  if (!opts_.session_setup.empty())
    exec(opts_.session_setup);
  up_ = true;
  reconnect_failures_ = 0;
}

void connection::check(PGresult* r, std::string_view sql, bool deferred) {
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    aborted_by_.reset();  // a statement ran: the transaction is not aborted
    return;
  }
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string what = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
  while (!what.empty() && (what.back() == '\n' || what.back() == ' '))
    what.pop_back();
  const bool lost = PQstatus(conn_) != CONNECTION_OK;
  if (lost)
    up_ = false;
  std::string code = state && !lost ? state : std::string(connection_lost);
  PQclear(r);
  if (code == in_failed_transaction && aborted_by_) {
    // Refused because storage trouble failed an earlier statement that the caller caught:
    // reported as that trouble, not as a refusal of this statement.
    what += " (the transaction was aborted by an earlier error that was caught: " +
            aborted_by_->second + ")";
    code = aborted_by_->first;
  } else if (depth_ > 0 && error(code, "").storage_failure()) {
    aborted_by_.emplace(code, what);
  } else if (code != in_failed_transaction) {
    aborted_by_.reset();
  }
  const std::size_t cut = sql.find(' ', 40);
  throw error(code,
              std::string(sql.substr(0, cut)) + (cut == sql.npos ? "" : " ...") + ": " +
                  (what.empty() ? "connection to PostgreSQL lost" : what),
              deferred);
}

void connection::ensure_connected() {
  // A connection whose round trip broke off is reset like a lost one.
  if (PQstatus(conn_) == CONNECTION_OK && !broken_ && PQpipelineStatus(conn_) == PQ_PIPELINE_OFF)
    return;
  up_ = false;
  if (depth_ > 0)
    throw error(connection_lost, "the connection to PostgreSQL was lost in a transaction");
  const auto now = std::chrono::steady_clock::now();
  if (now < next_reconnect_)
    throw error(connection_lost, "PostgreSQL is unreachable; the next reconnection is scheduled");
  PQreset(conn_);
  if (PQstatus(conn_) == CONNECTION_OK) {
    try {
      configure();
    } catch (...) {
      broken_ = true;  // half set up: the next call resets it again
      throw;
    }
    return;
  }
  const backoff_policy policy{opts_.reconnect_base, opts_.reconnect_cap};
  next_reconnect_ = now + policy.delay(reconnect_failures_++, rng_);
  throw error(connection_lost, std::string("PostgreSQL is unreachable: ") + PQerrorMessage(conn_));
}

void connection::exec(std::string_view sql) {
  if (depth_ == 0)
    ensure_connected();
  fail_if_broken();
  if (!deferred_.empty())
    flush_deferred();
  const std::string s(sql);
  PGresult* r = PQexec(conn_, s.c_str());
  check(r, sql);
  PQclear(r);
}

const std::string& connection::prepared(std::string_view sql, std::size_t params) {
  std::string key(sql);
  auto it = prepared_.find(key);
  if (it == prepared_.end()) {
    const std::string name = next_statement_name();
    PGresult* p = PQprepare(conn_, name.c_str(), key.c_str(), static_cast<int>(params), nullptr);
    check(p, sql);
    PQclear(p);
    it = prepared_.emplace(std::move(key), name).first;
  }
  return it->second;
}

result connection::run(std::string_view sql, std::vector<param> params) {
  if (depth_ == 0)
    ensure_connected();
  fail_if_broken();
  if (!deferred_.empty())
    return std::move(pipeline({{std::string(sql), std::move(params)}}).front());
  const std::string& name = prepared(sql, params.size());
  const libpq_params b(params);
  PGresult* r = PQexecPrepared(conn_, name.c_str(), static_cast<int>(params.size()),
                               b.values.data(), b.lengths.data(), b.formats.data(), 0);
  check(r, sql);
  return result(r);
}

void connection::fail_if_broken() const {
  if (broken_)
    throw error(connection_lost, "a round trip to PostgreSQL broke off in this transaction");
}

bool connection::lost() const {
  return !connected() || PQstatus(conn_) != CONNECTION_OK;
}

pg_conn* connection::native() const {
  aborted_by_.reset();
  return conn_;
}

bool connection::in_transaction() const {
  if (broken_)
    return false;  // ended: nothing more of it can commit
  if (!deferred_.empty() && deferred_.front().sql == "BEGIN")
    return true;
  const PGTransactionStatusType s = PQtransactionStatus(conn_);
  return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE;
}

void connection::after_commit(std::function<void()> fn) {
  hooks_->add(depth_, std::move(fn));
}

void connection::tally(std::size_t slot, std::int64_t delta) {
  if (slot >= tally_totals{}.size())
    throw std::out_of_range("pg::connection::tally: no such slot");
  if (depth_ == 0)
    throw std::logic_error("pg::connection::tally outside a transaction");
  tallies_->add(depth_, slot, delta);
}

void connection::on_commit_tallies(std::function<void(connection&, const tally_totals&)> fn) {
  record_tallies_ = std::move(fn);
}

}  // namespace exactly::pg
