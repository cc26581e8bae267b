#include "reconcile.hpp"

#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <ostream>

namespace exactly::samples::demo {
namespace {

// `sql` with {o} replaced by `orders` (how the payment side's queries name the Orders tables).
std::string with_orders(std::string sql, const std::string& orders) {
  for (std::size_t at; (at = sql.find("{o}")) != std::string::npos;)
    sql.replace(at, 3, orders);
  return sql;
}

// One customer's row of the balance query: id, balance (NULL: no account yet), billed sum.
struct customer_row {
  std::string customer_id;
  std::optional<std::int64_t> balance;
  std::int64_t billed = 0;
};

constexpr const char* balances_sql =
    "SELECT c.customer_id, a.balance_cents,"
    " (SELECT coalesce(sum(amount_cents), 0) FROM {o}orders"
    "  WHERE customer_id = c.customer_id AND status = 'billed')"
    " FROM (SELECT customer_id FROM {o}orders UNION SELECT customer_id FROM accounts) c"
    " LEFT JOIN accounts a ON a.customer_id = c.customer_id ORDER BY c.customer_id";

std::vector<customer_row> customers(const database& p, const std::string& orders) {
  std::vector<customer_row> out;
  const std::string sql = with_orders(balances_sql, orders);
  if (p.kind() == engine::postgres) {
    const pg::result q = p.as_postgres().query(sql);
    for (int i = 0; i < q.rows(); ++i) {
      out.push_back({q.text(i, 0), q.is_null(i, 1) ? std::nullopt : std::optional(q.int64(i, 1)),
                     q.int64(i, 2)});
    }
    return out;
  }
  auto& q = p.as_sqlite().prepare(sql);
  while (q.step())
    out.push_back({q.text(0), q.is_null(1) ? std::nullopt : std::optional(q.int64(1)), q.int64(2)});
  q.reset();
  return out;
}

// The Orders/Billing side, read from `o` (journal: the journal's count, -1 to read it from `o`).
void read_orders(reconciliation& r, const database& o, std::int64_t journal) {
  const auto count = [&o](const char* sql) { return o.query_int64(sql).value_or(0); };
  r.stored = count("SELECT count(*) FROM orders");
  r.billed = count("SELECT count(*) FROM orders WHERE status = 'billed'");
  r.failed = count("SELECT count(*) FROM orders WHERE status = 'failed'");
  r.unfinished = r.submitted - r.billed - r.failed;
  r.outcomes_repeated = count("SELECT count(*) FROM orders WHERE outcomes > 1");
  r.invokes_repeated = count("SELECT count(*) FROM billing_invocations WHERE invokes > 1");
  r.responses_repeated = count("SELECT count(*) FROM billing_responses WHERE handled > 1");
  r.client_invocations_pending = count("SELECT count(*) FROM exactly_invocations");
  r.client_queued = count("SELECT count(*) FROM exactly_queue");
  r.client_errors = count("SELECT count(*) FROM exactly_error_queue");
  r.client_journal = journal >= 0 ? journal : count("SELECT count(*) FROM exactly_attempts");
}

// The payment side, read from `p`, whose queries reach the Orders tables as `orders` + name.
void read_payment(reconciliation& r, const database& p, const std::string& orders,
                  std::int64_t opening) {
  const auto count = [&](const char* sql) {
    return p.query_int64(with_orders(sql, orders)).value_or(0);
  };
  r.authorizations = count("SELECT count(*) FROM authorizations");
  r.declines = count("SELECT count(*) FROM declines");
  r.executions = r.authorizations + r.declines;
  r.ledger_entries = count("SELECT count(*) FROM ledger");
  r.duplicate_executions = count(
      "SELECT coalesce(sum(n - 1), 0) FROM (SELECT reference, count(*) AS n FROM"
      " (SELECT reference FROM authorizations UNION ALL SELECT reference FROM declines) e"
      " GROUP BY reference) d");
  r.billed_not_authorized = count(
      "SELECT count(*) FROM {o}orders WHERE status = 'billed' AND order_id NOT IN"
      " (SELECT reference FROM authorizations)");
  r.failed_not_declined = count(
      "SELECT count(*) FROM {o}orders WHERE status = 'failed' AND order_id NOT IN"
      " (SELECT reference FROM declines)");
  r.unknown_executions = count(
      "SELECT count(*) FROM (SELECT reference FROM authorizations UNION ALL"
      " SELECT reference FROM declines) e WHERE reference NOT IN (SELECT order_id FROM {o}orders)");
  r.staged = count("SELECT count(*) FROM exactly_interactions WHERE state = 1");
  r.executed = count("SELECT count(*) FROM exactly_interactions WHERE state = 2");
  r.server_outbox = count("SELECT count(*) FROM exactly_server_outbox");
  r.server_dead_letters = count("SELECT count(*) FROM exactly_server_dead_letters");
  // Every customer with an order, and every account the service opened.
  for (const customer_row& c : customers(p, orders)) {
    balance_line b{c.customer_id, c.balance.value_or(opening), opening - c.billed};
    if (b.balance_cents != b.expected_cents || b.balance_cents < 0)
      ++r.balance_mismatches;
    r.balances.push_back(std::move(b));
  }
}

}  // namespace

reconciliation reconcile(const std::string& orders_db, const std::string& payment_db,
                         std::int64_t opening, std::int64_t submitted) {
  reconciliation r;
  r.submitted = submitted;
  std::int64_t journal = 0;
  if (std::filesystem::exists(orders_db + ".attempts")) {
    sqlite::connection j(orders_db + ".attempts");
    journal = j.query_int64("SELECT count(*) FROM exactly_attempts").value_or(0);
  }
  sqlite::connection o(orders_db);
  read_orders(r, o, journal);
  sqlite::connection p(payment_db);
  if (!p.query_int64("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                     "authorizations"))
    return r;  // the payment service never started
  p.exec("ATTACH DATABASE '" + orders_db + "' AS o");
  read_payment(r, p, "o.", opening);
  p.exec("DETACH DATABASE o");
  return r;
}

reconciliation reconcile_postgres(const std::string& conninfo, const std::string& orders_schema,
                                  const std::string& payment_schema, std::int64_t opening,
                                  std::int64_t submitted) {
  reconciliation r;
  r.submitted = submitted;
  pg::connection o({conninfo + " options='-c search_path=" + orders_schema + "'"});
  read_orders(r, o, -1);
  pg::connection p({conninfo + " options='-c search_path=" + payment_schema + "'"});
  if (!p.query_int64("SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2",
                     payment_schema, "authorizations"))
    return r;  // the payment service never started
  read_payment(r, p, orders_schema + ".", opening);
  return r;
}

std::vector<std::string> violations(const reconciliation& r) {
  std::vector<std::string> v;
  auto check = [&v](bool ok, std::string what) {
    if (!ok)
      v.push_back(std::move(what));
  };
  check(r.unfinished == 0 && r.stored == r.submitted, "orders lost or unfinished");
  check(r.executions == r.submitted, "payment executions differ from orders");
  check(r.duplicate_executions == 0, "an order executed more than once at the payment service");
  check(r.billed_not_authorized == 0 && r.failed_not_declined == 0,
        "an order's outcome disagrees with the payment service");
  check(r.unknown_executions == 0, "a payment execution for no order");
  check(r.ledger_entries == r.authorizations, "ledger entries differ from authorizations");
  check(r.outcomes_repeated == 0 && r.invokes_repeated == 0 && r.responses_repeated == 0,
        "a handler committed more than once");
  check(r.balance_mismatches == 0, "a balance differs from the expected value");
  check(r.staged == 0 && r.executed == 0, "staged or executed rows left on the server");
  check(r.client_invocations_pending == 0 && r.client_journal == 0,
        "pending invocations left on the client");
  check(r.client_queued == 0 && r.server_outbox == 0, "messages left in a queue or outbox");
  check(r.client_errors == 0 && r.server_dead_letters == 0, "messages in an error queue");
  return v;
}

bool quiet(const reconciliation& r) {
  return r.unfinished == 0 && r.client_queued == 0 && r.client_invocations_pending == 0 &&
         r.client_journal == 0 && r.staged == 0 && r.executed == 0 && r.server_outbox == 0;
}

void print(std::ostream& out, const reconciliation& r, std::size_t max_balances) {
  auto row = [&out](const std::string& what, std::int64_t value, std::int64_t expected) {
    out << "  " << std::left << std::setw(44) << what << std::right << std::setw(10) << value
        << std::setw(10) << expected << (value == expected ? "   ok" : "   VIOLATION") << '\n';
  };
  auto info = [&out](const std::string& what, std::int64_t value) {
    out << "  " << std::left << std::setw(44) << what << std::right << std::setw(10) << value
        << '\n';
  };
  out << "  " << std::left << std::setw(44) << "" << std::right << std::setw(10) << "value"
      << std::setw(10) << "expected" << '\n';
  info("orders submitted", r.submitted);
  row("orders stored by Orders", r.stored, r.submitted);
  info("orders billed", r.billed);
  info("orders failed (402 insufficient funds)", r.failed);
  row("orders lost (neither billed nor failed)", r.unfinished, 0);
  row("payment executions", r.executions, r.submitted);
  row("duplicate executions (same order twice)", r.duplicate_executions, 0);
  row("outcome differs from the payment service",
      r.billed_not_authorized + r.failed_not_declined + r.unknown_executions, 0);
  row("ledger entries", r.ledger_entries, r.authorizations);
  row("handlers committed more than once",
      r.outcomes_repeated + r.invokes_repeated + r.responses_repeated, 0);
  row("balances differing from expected", r.balance_mismatches, 0);
  row("server: staged rows left", r.staged, 0);
  row("server: executed rows left", r.executed, 0);
  row("server: outbox messages pending", r.server_outbox, 0);
  row("client: invocations pending (outbox)", r.client_invocations_pending + r.client_journal, 0);
  row("client: messages queued", r.client_queued, 0);
  row("error queues (client + server)", r.client_errors + r.server_dead_letters, 0);
  out << "\n  " << std::left << std::setw(20) << "customer" << std::right << std::setw(14)
      << "balance" << std::setw(14) << "expected" << '\n';
  std::size_t shown = 0;
  for (const balance_line& b : r.balances) {
    if (shown++ == max_balances) {
      out << "  ... " << r.balances.size() - max_balances << " more\n";
      break;
    }
    out << "  " << std::left << std::setw(20) << b.customer_id << std::right << std::setw(14)
        << b.balance_cents << std::setw(14) << b.expected_cents
        << (b.balance_cents == b.expected_cents ? "   ok" : "   VIOLATION") << '\n';
  }
}

}  // namespace exactly::samples::demo
