#pragma once
// The demo's reconciliation: reads the Orders/Billing database and the payment service's database
// after the run and counts what a double charge, a lost order or a leftover would show.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace exactly::samples::demo {

struct balance_line {
  std::string customer_id;
  std::int64_t balance_cents = 0;   // in the payment service's accounts
  std::int64_t expected_cents = 0;  // opening balance minus the orders billed to the customer
};

struct reconciliation {
  // Orders/Billing side.
  std::int64_t submitted = 0;  // by the driver
  std::int64_t stored = 0, billed = 0, failed = 0;
  std::int64_t unfinished = 0;          // submitted but neither billed nor failed
  std::int64_t outcomes_repeated = 0;   // orders whose outcome handler committed more than once
  std::int64_t invokes_repeated = 0;    // orders whose bill_customer invoked more than once
  std::int64_t responses_repeated = 0;  // follow-ups handled more than once
  std::int64_t client_invocations_pending = 0, client_queued = 0, client_errors = 0,
               client_journal = 0;
  // Payment side.
  std::int64_t executions = 0;  // authorizations + declines: one row per execution
  std::int64_t authorizations = 0, declines = 0, ledger_entries = 0;
  std::int64_t duplicate_executions = 0;  // executions beyond the first for one order
  std::int64_t billed_not_authorized = 0, failed_not_declined = 0, unknown_executions = 0;
  std::int64_t staged = 0, executed = 0, server_outbox = 0, server_dead_letters = 0;
  std::vector<balance_line> balances;
  std::int64_t balance_mismatches = 0;
};

// Reads both SQLite databases (the services may be running) for `submitted` orders.
reconciliation reconcile(const std::string& orders_db, const std::string& payment_db,
                         std::int64_t opening_balance_cents, std::int64_t submitted);
// The same on PostgreSQL: both sides in the database of `conninfo`, each in its schema.
reconciliation reconcile_postgres(const std::string& conninfo, const std::string& orders_schema,
                                  const std::string& payment_schema,
                                  std::int64_t opening_balance_cents, std::int64_t submitted);

// Everything that breaks exactly-once or leaves work behind; empty when the run was clean.
std::vector<std::string> violations(const reconciliation& r);

// True when nothing is left to do on either side (the run has quiesced).
bool quiet(const reconciliation& r);

// The report table; `max_balances` customers are listed one per line.
void print(std::ostream& out, const reconciliation& r, std::size_t max_balances);

}  // namespace exactly::samples::demo
