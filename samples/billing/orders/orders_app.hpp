#pragma once
// The billing sample's Orders and Billing endpoints, message-driven, sharing one database:
//   submit_order -> Orders stores the order, sends bill_customer to Billing
//   bill_customer -> Billing invoke_http(payment route), follow-up process_authorize_response
//   process_authorize_response -> billing_succeeded (200) or billing_failed (402) to Orders
//   billing_succeeded / billing_failed -> Orders marks the order billed or failed.

#include <exactly/client/endpoint.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace exactly::samples::orders {

inline constexpr const char* orders_endpoint = "orders";
inline constexpr const char* billing_endpoint = "billing";

struct order {
  std::string order_id;
  std::string customer_id;
  std::int64_t amount_cents = 0;
};

struct settings {
  std::string payment_url;  // "http://HOST:PORT" of the payment service (or a proxy before it)
  std::string api_key{};    // sent as a bearer to the payment service; "" = none
  // Retries and backoff; a transport set here is shared (it is thread-safe), else one is made.
  client::endpoint_options endpoint{};
};

// Creates the sample's tables in `db` (SQLite or PostgreSQL) if they are missing.
void create_schema(const database& db);

// The Orders and Billing endpoints on `db` with their handlers, on s.endpoint.transport or, when
// that is empty, on a transport of their own made with make_transport(s).
// Throws std::invalid_argument when payment_url is not an http:// or https:// URL.
std::vector<std::unique_ptr<client::endpoint>> make_endpoints(const database& db,
                                                              const settings& s);

// A transport to the payment service carrying the API key, for make_endpoints to share.
// Throws std::invalid_argument when payment_url is not an http:// or https:// URL.
std::shared_ptr<client::http_transport> make_transport(const settings& s);

// Queues submit_order for each order, all in one transaction. Submitting an order id again is
// harmless: Orders ignores an order it already has.
void submit(const database& db, const std::vector<order>& orders);

}  // namespace exactly::samples::orders
