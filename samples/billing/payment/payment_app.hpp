#pragma once
// The payment service of the billing sample: the connector route /payment/authorize/{id} and the
// read endpoint GET /accounts/{customer_id}, on one SQLite database.

#include <exactly/server/connector.hpp>
#include <exactly/server/http_server.hpp>

#include <cstdint>

namespace exactly::samples::payment {

inline constexpr const char* authorize_route = "/payment/authorize/{id}";

// Creates the tables, registers the authorize route, the settle_transaction handler and the
// accounts endpoint. Accounts open with `initial_balance_cents` on first use.
// Authorize takes {"customer_id": "...", "amount_cents": N>0, "reference": "..." (optional)}; it
// debits the account, records the authorization and sends settle_transaction (which appends the
// ledger entry), answering 200 {"authorization_id", "balance_cents"}; or it records a decline and
// answers the stored business outcome 402 {"reason": "insufficient_funds"}, the account untouched.
// Every execution leaves exactly one row in authorizations or declines, so executions can be
// counted per reference.
void install(server::connector& c, server::http_server& http, std::int64_t initial_balance_cents);

}  // namespace exactly::samples::payment
