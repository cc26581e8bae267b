// The README's connector example, compiled with the project so it cannot drift.

#include <exactly/server/http_server.hpp>

struct authorize {
  std::string customer;
  std::int64_t amount;
};

int main() {
  exactly::server::connector payments({.db_path = "payments.db"});  // synchronous=FULL, WAL
  payments.db().exec(
      "CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, balance INTEGER);"
      "CREATE TABLE IF NOT EXISTS ledger (customer TEXT)");
  payments.route<authorize>(
      "/payment/authorize/{id}",
      // Runs at PUT: a body it refuses is 422 invalid-payload and is never staged.
      [](const exactly::server::incoming_request& in) -> exactly::server::parse_result<authorize> {
        auto j = nlohmann::json::parse(in.body, nullptr, false);
        if (!j.is_object() || !j["amount"].is_number_integer())
          return exactly::server::invalid_payload{"amount?"};
        return authorize{j.value("customer", ""), j["amount"].get<std::int64_t>()};
      },
      // Runs once per staged id at POST, in the transaction that stores its response.
      [](exactly::server::session<authorize>& s) {
        s.db()
            .prepare("UPDATE accounts SET balance = balance - ? WHERE id = ?")
            .bind_all(s.payload().amount, s.payload().customer)
            .run();
        s.send("settle_transaction", {{"customer", s.payload().customer}});  // same transaction
        return exactly::server::stored_response{200, "application/json", R"({"ok":true})"};
      });
  payments.on_message("settle_transaction", [](exactly::server::message_context& m) {
    m.db()
        .prepare("INSERT INTO ledger(customer) VALUES(?)")
        .bind(1, m.body.value("customer", ""))
        .run();
  });
  exactly::server::http_server server({.port = 8080, .api_keys = {{"secret", "billing"}}},
                                      payments);
  server.run();  // until SIGINT/SIGTERM, then a graceful shutdown
}
