#include "reconcile.hpp"

#include <exactly/common/sqlite.hpp>

#include <filesystem>
#include <iomanip>
#include <map>
#include <ostream>

namespace exactly::samples::demo {
namespace {

std::int64_t count(sqlite::connection& db, const char* sql) {
  return db.query_int64(sql).value_or(0);
}

bool has_table(sqlite::connection& db, const char* table) {
  return db.query_int64("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", table)
      .has_value();
}

}  // namespace

reconciliation reconcile(const std::string& orders_db, const std::string& payment_db,
                         std::int64_t opening, std::int64_t submitted) {
  reconciliation r;
  r.submitted = submitted;
  sqlite::connection o(orders_db);
  r.stored = count(o, "SELECT count(*) FROM orders");
  r.billed = count(o, "SELECT count(*) FROM orders WHERE status = 'billed'");
  r.failed = count(o, "SELECT count(*) FROM orders WHERE status = 'failed'");
  r.unfinished = r.submitted - r.billed - r.failed;
  r.outcomes_repeated = count(o, "SELECT count(*) FROM orders WHERE outcomes > 1");
  r.invokes_repeated = count(o, "SELECT count(*) FROM billing_invocations WHERE invokes > 1");
  r.responses_repeated = count(o, "SELECT count(*) FROM billing_responses WHERE handled > 1");
  r.client_invocations_pending = count(o, "SELECT count(*) FROM exactly_invocations");
  r.client_queued = count(o, "SELECT count(*) FROM exactly_queue");
  r.client_errors = count(o, "SELECT count(*) FROM exactly_error_queue");
  if (std::filesystem::exists(orders_db + ".attempts")) {
    sqlite::connection j(orders_db + ".attempts");
    r.client_journal = count(j, "SELECT count(*) FROM exactly_attempts");
  }

  sqlite::connection p(payment_db);
  if (!has_table(p, "authorizations"))
    return r;  // the payment service never started
  p.exec("ATTACH DATABASE '" + orders_db + "' AS o");
  r.authorizations = count(p, "SELECT count(*) FROM authorizations");
  r.declines = count(p, "SELECT count(*) FROM declines");
  r.executions = r.authorizations + r.declines;
  r.ledger_entries = count(p, "SELECT count(*) FROM ledger");
  r.duplicate_executions =
      count(p,
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT reference, count(*) AS n FROM"
            " (SELECT reference FROM authorizations UNION ALL SELECT reference FROM declines)"
            " GROUP BY reference)");
  r.billed_not_authorized =
      count(p,
            "SELECT count(*) FROM o.orders WHERE status = 'billed' AND order_id NOT IN"
            " (SELECT reference FROM authorizations)");
  r.failed_not_declined =
      count(p,
            "SELECT count(*) FROM o.orders WHERE status = 'failed' AND order_id NOT IN"
            " (SELECT reference FROM declines)");
  r.unknown_executions = count(
      p,
      "SELECT count(*) FROM (SELECT reference FROM authorizations UNION ALL"
      " SELECT reference FROM declines) WHERE reference NOT IN (SELECT order_id FROM o.orders)");
  r.staged = count(p, "SELECT count(*) FROM exactly_interactions WHERE state = 1");
  r.executed = count(p, "SELECT count(*) FROM exactly_interactions WHERE state = 2");
  r.server_outbox = count(p, "SELECT count(*) FROM exactly_server_outbox");
  r.server_dead_letters = count(p, "SELECT count(*) FROM exactly_server_dead_letters");

  // Every customer with an order, and every account the service opened.
  auto& q = p.prepare(
      "SELECT c.customer_id, a.balance_cents,"
      " (SELECT coalesce(sum(amount_cents), 0) FROM o.orders"
      "  WHERE customer_id = c.customer_id AND status = 'billed')"
      " FROM (SELECT customer_id FROM o.orders UNION SELECT customer_id FROM accounts) c"
      " LEFT JOIN accounts a ON a.customer_id = c.customer_id ORDER BY c.customer_id");
  while (q.step()) {
    balance_line b{q.text(0), q.is_null(1) ? opening : q.int64(1), opening - q.int64(2)};
    if (b.balance_cents != b.expected_cents || b.balance_cents < 0)
      ++r.balance_mismatches;
    r.balances.push_back(std::move(b));
  }
  q.reset();
  p.exec("DETACH DATABASE o");
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
