#include "payment_app.hpp"

#include <nlohmann/json.hpp>

namespace exactly::samples::payment {
namespace {

struct authorize_request {
  std::string customer_id;
  std::int64_t amount_cents = 0;
  std::string reference;  // the caller's own reference (an order id), optional
};

server::parse_result<authorize_request> parse(const server::incoming_request& in) {
  const auto j = nlohmann::json::parse(in.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return server::invalid_payload{"expected a JSON object"};
  const auto customer = j.find("customer_id");
  if (customer == j.end() || !customer->is_string() || customer->get<std::string>().empty()) {
    return server::invalid_payload{"customer_id must be a non-empty string"};
  }
  const auto amount = j.find("amount_cents");
  if (amount == j.end() || !amount->is_number_integer() || amount->get<std::int64_t>() <= 0) {
    return server::invalid_payload{"amount_cents must be a positive integer"};
  }
  std::string reference;
  if (const auto ref = j.find("reference"); ref != j.end()) {
    if (!ref->is_string())
      return server::invalid_payload{"reference must be a string"};
    reference = ref->get<std::string>();
  }
  return authorize_request{customer->get<std::string>(), amount->get<std::int64_t>(),
                           std::move(reference)};
}

// The SQL below means the same on SQLite and PostgreSQL: the service runs on either engine.
std::int64_t balance_of(const database& db, const std::string& customer, std::int64_t initial) {
  db.execute("INSERT INTO accounts(customer_id, balance_cents) VALUES(?, ?) ON CONFLICT DO NOTHING",
             customer, initial);
  // On PostgreSQL, instances decide on one account at once: the row is locked until the commit,
  // so two of them cannot both spend the same balance. (SQLite has one writer at a time.)
  return *db.query_int64(db.kind() == engine::postgres
                             ? "SELECT balance_cents FROM accounts WHERE customer_id = ? FOR UPDATE"
                             : "SELECT balance_cents FROM accounts WHERE customer_id = ?",
                         customer);
}

}  // namespace

void install(server::connector& c, server::http_server& http, std::int64_t initial) {
  c.storage().exec(
      "CREATE TABLE IF NOT EXISTS accounts ("
      " customer_id TEXT PRIMARY KEY, balance_cents BIGINT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS authorizations ("
      " authorization_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL, reference TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE IF NOT EXISTS declines ("
      " request_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL, reference TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE IF NOT EXISTS ledger ("
      " authorization_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL);");

  c.route<
      authorize_request>(authorize_route, parse, [initial](server::session<authorize_request>& s) {
    const authorize_request& r = s.payload();
    const database& db = s.storage();
    const std::int64_t balance = balance_of(db, r.customer_id, initial);
    if (balance < r.amount_cents) {
      db.execute(
          "INSERT INTO declines(request_id, customer_id, amount_cents, reference)"
          " VALUES(?, ?, ?, ?)",
          s.id().to_string(), r.customer_id, r.amount_cents, r.reference);
      return server::stored_response{402, "application/json", R"({"reason":"insufficient_funds"})"};
    }
    const std::string authorization_id = s.id().to_string();
    db.execute("UPDATE accounts SET balance_cents = balance_cents - ? WHERE customer_id = ?",
               r.amount_cents, r.customer_id);
    db.execute(
        "INSERT INTO authorizations(authorization_id, customer_id, amount_cents, reference)"
        " VALUES(?, ?, ?, ?)",
        authorization_id, r.customer_id, r.amount_cents, r.reference);
    s.send("settle_transaction", {{"authorization_id", authorization_id},
                                  {"customer_id", r.customer_id},
                                  {"amount_cents", r.amount_cents}});
    return server::stored_response{200, "application/json",
                                   nlohmann::json{{"authorization_id", authorization_id},
                                                  {"balance_cents", balance - r.amount_cents}}
                                       .dump()};
  });

  c.on_message("settle_transaction", [](server::message_context& m) {
    // Delivered once per committed authorization; the primary key makes a bug visible, not silent.
    m.storage().execute(
        "INSERT INTO ledger(authorization_id, customer_id, amount_cents) VALUES(?, ?, ?)",
        m.body.at("authorization_id").get<std::string>(),
        m.body.at("customer_id").get<std::string>(), m.body.at("amount_cents").get<std::int64_t>());
  });

  http.add_route("GET", "/accounts/{customer_id}", [&c, initial](const server::http_request& r) {
    const std::string& customer = r.params.at("customer_id");
    const database db = c.storage();
    database_transaction tx(db);
    const std::int64_t balance = balance_of(db, customer, initial);
    const nlohmann::json body = {
        {"customer_id", customer},
        {"balance_cents", balance},
        {"authorizations",
         *db.query_int64("SELECT count(*) FROM authorizations WHERE customer_id = ?", customer)},
        {"ledger_entries",
         *db.query_int64("SELECT count(*) FROM ledger WHERE customer_id = ?", customer)}};
    tx.commit();
    return server::http_response{200, "application/json", body.dump(), {}};
  });
}

}  // namespace exactly::samples::payment
