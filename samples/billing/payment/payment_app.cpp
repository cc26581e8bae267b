#include "payment_app.hpp"

#include <exactly/common/problem.hpp>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

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
  if (customer == j.end() || !customer->is_string() ||
      !valid_account_id(customer->get<std::string>())) {
    return server::invalid_payload{std::string("customer_id must be ") + account_id_rule};
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
// The balance of `customer` owned by `principal`, opening the account for `principal` with
// `initial` if nobody has it yet; nullopt when another principal owns it.
std::optional<std::int64_t> debitable_balance(const database& db, const std::string& customer,
                                              const std::string& principal, std::int64_t initial) {
  db.execute(
      "INSERT INTO accounts(customer_id, owner, balance_cents) VALUES(?, ?, ?)"
      " ON CONFLICT DO NOTHING",
      customer, principal, initial);
  // On PostgreSQL, instances decide on one account at once: the row is locked until the commit,
  // so two of them cannot both spend the same balance. (SQLite has one writer at a time.)
  return db.query_int64(
      db.kind() == engine::postgres
          ? "SELECT balance_cents FROM accounts WHERE customer_id = ? AND owner = ? FOR UPDATE"
          : "SELECT balance_cents FROM accounts WHERE customer_id = ? AND owner = ?",
      customer, principal);
}

// The answer for an account the caller may not see: the same whether it does not exist or
// another principal owns it, so nobody learns which accounts others have.
problem no_such_account(const std::string& customer) {
  return make_problem(errc::not_found, "no account " + customer + " for this principal");
}

server::http_response problem_answer(const problem& p) {
  return server::http_response{p.status, "application/problem+json", to_body(p), {}};
}

// Throws std::runtime_error when the tables come from a version of this sample before account
// owners (CREATE TABLE IF NOT EXISTS keeps them as they were).
void require_current_schema(const database& db) {
  const auto has = [&db](const char* table, const char* column) {
    return db.query_int64(db.kind() == engine::postgres
                              ? "SELECT count(*) FROM information_schema.columns WHERE"
                                " table_schema = current_schema() AND table_name = ? AND"
                                " column_name = ?"
                              : "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?",
                          std::string(table), std::string(column))
               .value_or(0) == 1;
  };
  if (!has("accounts", "owner") || !has("declines", "principal")) {
    throw std::runtime_error(
        "payment tables from before account owners (accounts.owner, declines.principal "
        "missing): start on a fresh database");
  }
}

}  // namespace

bool valid_account_id(std::string_view id) {
  if (id.empty() || id.size() > max_account_id_size)
    return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok)
      return false;
  }
  return true;
}

void install(server::connector& c, server::http_server& http, std::int64_t initial) {
  c.storage().exec(
      "CREATE TABLE IF NOT EXISTS accounts ("
      " customer_id TEXT PRIMARY KEY, owner TEXT NOT NULL, balance_cents BIGINT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS authorizations ("
      " authorization_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL, reference TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE IF NOT EXISTS declines ("
      " request_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL, reference TEXT NOT NULL DEFAULT '',"
      " reason TEXT NOT NULL DEFAULT 'insufficient_funds', principal TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE IF NOT EXISTS ledger ("
      " authorization_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL,"
      " amount_cents BIGINT NOT NULL);");

  require_current_schema(c.storage());

  c.route<
      authorize_request>(authorize_route, parse, [initial](server::session<authorize_request>& s) {
    const authorize_request& r = s.payload();
    const database& db = s.storage();
    const std::string principal(s.principal());
    const auto decline = [&](const char* reason) {
      db.execute(
          "INSERT INTO declines(request_id, customer_id, amount_cents, reference, reason, "
          "principal)"
          " VALUES(?, ?, ?, ?, ?, ?)",
          s.id().to_string(), r.customer_id, r.amount_cents, r.reference, std::string(reason),
          principal);
    };
    const std::optional<std::int64_t> owned =
        debitable_balance(db, r.customer_id, principal, initial);
    if (!owned) {
      decline("not_owner");
      const problem p = no_such_account(r.customer_id);
      return server::stored_response{p.status, "application/problem+json", to_body(p)};
    }
    const std::int64_t balance = *owned;
    if (balance < r.amount_cents) {
      decline("insufficient_funds");
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

  http.add_route("GET", "/accounts/{customer_id}", [&c](const server::http_request& r) {
    const std::string& customer = r.params.at("customer_id");
    if (!valid_account_id(customer))  // never quoted back: it may be any bytes
      return problem_answer(
          make_problem(errc::bad_request, std::string("account ids are ") + account_id_rule));
    const database db = c.storage();
    database_transaction tx(db);  // reads only: the balance and the counts of one moment
    const std::optional<std::int64_t> balance =
        db.query_int64("SELECT balance_cents FROM accounts WHERE customer_id = ? AND owner = ?",
                       customer, r.principal);
    if (!balance)
      return problem_answer(no_such_account(customer));
    const nlohmann::json body = {
        {"customer_id", customer},
        {"balance_cents", *balance},
        {"authorizations",
         *db.query_int64("SELECT count(*) FROM authorizations WHERE customer_id = ?", customer)},
        {"ledger_entries",
         *db.query_int64("SELECT count(*) FROM ledger WHERE customer_id = ?", customer)}};
    tx.commit();
    return server::http_response{200, "application/json", body.dump(), {}};
  });
}

}  // namespace exactly::samples::payment
