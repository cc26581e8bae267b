#pragma once
// The payment service of the billing sample: the connector route /payment/authorize/{id} and the
// read endpoint GET /accounts/{customer_id}, on SQLite or PostgreSQL. Each account belongs to the
// principal that opened it; other principals cannot see or debit it.

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace exactly::samples::payment {

inline constexpr const char* authorize_route = "/payment/authorize/{id}";

// Account ids (customer_id): 1 to 64 ASCII letters, digits, '-', '_' or '.'.
inline constexpr std::size_t max_account_id_size = 64;
inline constexpr const char* account_id_rule = "1 to 64 ASCII letters, digits, '-', '_' or '.'";
// Whether `id` is a valid account id.
bool valid_account_id(std::string_view id);

// Creates the tables, registers the authorize route, the settle_transaction handler and the
// accounts endpoint.
// Authorize takes {"customer_id": "<account id>", "amount_cents": N>0, "reference": "..."
// (optional)}; anything else is refused at PUT (422). Its execution opens the account for the
// calling principal with `initial_balance_cents` if nobody has it yet. On an account of the
// caller it debits the account, records the authorization and sends settle_transaction (which
// appends the ledger entry), answering 200 {"authorization_id", "balance_cents"}; or it records a
// decline and answers the stored business outcome 402 {"reason": "insufficient_funds"}, the
// account untouched. On another principal's account it records a decline (reason not_owner) and
// answers the stored 404 not-found problem, the account untouched. Every execution leaves exactly
// one row in authorizations or declines, so executions can be counted per reference.
// GET /accounts/{customer_id} reads and writes nothing else: 200 {"customer_id", "balance_cents",
// "authorizations", "ledger_entries"} for an account of the caller, 404 not-found (a problem)
// for an unknown account or another principal's, 400 bad-request for an invalid account id.
void install(server::connector& c, server::http_server& http, std::int64_t initial_balance_cents);

}  // namespace exactly::samples::payment
