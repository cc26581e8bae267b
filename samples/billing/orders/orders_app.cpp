#include "orders_app.hpp"

#include <exactly/common/clock.hpp>

#include <stdexcept>

namespace exactly::samples::orders {
namespace {

// Orders: the order and how many outcomes it received (exactly one when the system is right).
// Billing: how many times it invoked the payment route per order, and how many responses it
// handled (each exactly one).
constexpr const char* schema =
    "CREATE TABLE IF NOT EXISTS orders ("
    " order_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, amount_cents BIGINT NOT NULL,"
    " status TEXT NOT NULL, authorization_id TEXT, outcomes INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS billing_invocations ("
    " order_id TEXT PRIMARY KEY, request_id TEXT NOT NULL, invokes INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS billing_responses ("
    " order_id TEXT PRIMARY KEY, status INTEGER NOT NULL, handled INTEGER NOT NULL);";

// The handlers' SQL means the same on SQLite and PostgreSQL: the sample runs on either engine.
void on_submit_order(client::handler_context& ctx) {
  const auto& b = ctx.incoming().body;
  const std::int64_t added = ctx.database().execute(
      "INSERT INTO orders(order_id, customer_id, amount_cents, status) VALUES(?, ?, ?, 'submitted')"
      " ON CONFLICT DO NOTHING",
      b.at("order_id").get<std::string>(), b.at("customer_id").get<std::string>(),
      b.at("amount_cents").get<std::int64_t>());
  if (added == 0)
    return;  // submitted before: already on its way
  ctx.send(billing_endpoint, {.type = "bill_customer", .body = b});
}

void on_billing_outcome(client::handler_context& ctx, const char* status) {
  const auto& b = ctx.incoming().body;
  ctx.database().execute(
      "UPDATE orders SET status = ?, authorization_id = ?, outcomes = outcomes + 1"
      " WHERE order_id = ?",
      status, b.value("authorization_id", std::string()), b.at("order_id").get<std::string>());
}

}  // namespace

void create_schema(const database& db) {
  db.exec(schema);
}

std::shared_ptr<client::http_transport> make_transport(const settings& s) {
  client::beast_transport_options t;
  const std::string authority = client::url_authority(s.payment_url);  // validates
  if (!s.api_key.empty())
    t.keys.push_back({authority, s.api_key});
  return client::make_beast_transport(t);
}

std::vector<std::unique_ptr<client::endpoint>> make_endpoints(const database& db,
                                                              const settings& s) {
  client::endpoint_options o = s.endpoint;
  if (!o.transport)
    o.transport = make_transport(s);

  auto orders = std::make_unique<client::endpoint>(orders_endpoint, db, o);
  orders->on("submit_order", on_submit_order);
  orders->on("billing_succeeded",
             [](client::handler_context& ctx) { on_billing_outcome(ctx, "billed"); });
  orders->on("billing_failed",
             [](client::handler_context& ctx) { on_billing_outcome(ctx, "failed"); });

  auto billing = std::make_unique<client::endpoint>(billing_endpoint, db, o);
  const std::string route = s.payment_url + "/payment/authorize/{id}";
  billing->on("bill_customer", [route](client::handler_context& ctx) {
    const auto& b = ctx.incoming().body;
    const std::string order_id = b.at("order_id");
    const nlohmann::json request = {{"customer_id", b.at("customer_id")},
                                    {"amount_cents", b.at("amount_cents")},
                                    {"reference", order_id}};
    const std::string id =
        ctx.invoke_http(route, request.dump(), "application/json",
                        {.type = "process_authorize_response", .body = {{"order_id", order_id}}});
    ctx.database().execute(
        "INSERT INTO billing_invocations VALUES(?, ?, 1)"
        " ON CONFLICT(order_id) DO UPDATE SET invokes = billing_invocations.invokes + 1",
        order_id, id);
  });
  billing->on("process_authorize_response", [](client::handler_context& ctx) {
    const client::http_result& r = *ctx.response();
    const std::string order_id = ctx.incoming().body.at("order_id");
    if (r.status == 200) {
      const auto body = nlohmann::json::parse(r.body);
      ctx.send(orders_endpoint, {.type = "billing_succeeded",
                                 .body = {{"order_id", order_id},
                                          {"authorization_id", body.at("authorization_id")}}});
    } else if (r.status == 402) {
      ctx.send(orders_endpoint,
               {.type = "billing_failed",
                .body = {{"order_id", order_id}, {"reason", "insufficient_funds"}}});
    } else {
      // Any other stored answer is kept for an operator: the message goes to the error queue.
      throw std::runtime_error("unexpected payment answer " + std::to_string(r.status) + ": " +
                               r.body);
    }
    ctx.database().execute(
        "INSERT INTO billing_responses VALUES(?, ?, 1)"
        " ON CONFLICT(order_id) DO UPDATE SET handled = billing_responses.handled + 1",
        order_id, r.status);
  });

  std::vector<std::unique_ptr<client::endpoint>> out;
  out.push_back(std::move(orders));
  out.push_back(std::move(billing));
  return out;
}

void submit(const database& db, const std::vector<order>& orders) {
  database_transaction tx(db);
  for (const order& o : orders) {
    client::send_in_transaction(db, orders_endpoint,
                                {.id = "submit-" + o.order_id,
                                 .type = "submit_order",
                                 .body = {{"order_id", o.order_id},
                                          {"customer_id", o.customer_id},
                                          {"amount_cents", o.amount_cents}}});
  }
  tx.commit();
}

}  // namespace exactly::samples::orders
