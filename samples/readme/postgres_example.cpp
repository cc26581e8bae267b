// The README's PostgreSQL example: a connector and a client runtime, each over PostgreSQL, so
// several processes of each may share one database. Compiled with the project, not run.
#include <exactly/client/runtime.hpp>
#include <exactly/server/http_server.hpp>

#include <thread>

// payment-service, one of N replicas behind a load balancer, all on one database.
void payment_service() {
  exactly::server::connector payments(
      {.postgres = exactly::pg::options{"host=db.internal dbname=payments user=payments"}});
  payments.pg().exec("CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, balance BIGINT)");
  payments.route<std::int64_t>(
      "/payment/authorize/{id}",
      [](const exactly::server::incoming_request& in)
          -> exactly::server::parse_result<std::int64_t> {
        const auto j = nlohmann::json::parse(in.body, nullptr, false);
        if (!j.is_object() || !j["amount"].is_number_integer())
          return exactly::server::invalid_payload{"amount?"};
        return j["amount"].get<std::int64_t>();
      },
      // PostgreSQL SQL, in the transaction that stores the response: once per id across replicas.
      [](exactly::server::session<std::int64_t>& s) {
        s.pg().execute("UPDATE accounts SET balance = balance - $1 WHERE id = $2", s.payload(),
                       std::string(s.principal()));
        return exactly::server::stored_response{200, "application/json", R"({"ok":true})"};
      });
  exactly::server::http_server server({.port = 8080, .api_keys = {{"secret", "billing"}}},
                                      payments);
  server.run();
}

// orders-billing, one of M processes consuming one queue: each message is handled by one of them.
void billing_service() {
  const exactly::pg::options pg{.conninfo = "host=db.internal dbname=billing user=billing"};
  exactly::pg::connection setup(pg);
  setup.exec("CREATE TABLE IF NOT EXISTS bills (order_id TEXT PRIMARY KEY, status BIGINT)");
  const std::shared_ptr<exactly::client::http_transport> transport =
      exactly::client::make_beast_transport({.keys = {{"payments.internal:8080", "secret"}}});
  exactly::client::runtime rt(
      pg,
      [transport](exactly::pg::connection& db) {
        std::vector<std::unique_ptr<exactly::client::endpoint>> eps;
        auto& billing = *eps.emplace_back(std::make_unique<exactly::client::endpoint>(
            "billing", db, exactly::client::endpoint_options{.transport = transport}));
        billing.on("bill_customer", [](exactly::client::handler_context& ctx) {
          ctx.invoke_http(
              "http://payments.internal:8080/payment/authorize/{id}",
              nlohmann::json{{"amount", ctx.incoming().body["amount"]}}.dump(), "application/json",
              {.type = "authorize_response", .body = {{"order", ctx.incoming().body["order"]}}});
        });
        billing.on("authorize_response", [](exactly::client::handler_context& ctx) {
          ctx.pg().execute("INSERT INTO bills VALUES ($1, $2)",
                           ctx.incoming().body["order"].get<std::string>(),
                           static_cast<std::int64_t>(ctx.response()->status));
        });
        return eps;
      },
      {.workers = 4});
  rt.start();
  {  // a message sent together with the caller's own writes, in one transaction
    exactly::database_transaction tx(setup);
    exactly::client::send_in_transaction(
        setup, "billing", {.type = "bill_customer", .body = {{"order", "o-1"}, {"amount", 42}}});
    tx.commit();
  }
  rt.notify();
  std::this_thread::sleep_for(std::chrono::hours(24));
  rt.stop();
}

int main(int argc, char**) {
  if (argc > 1)
    billing_service();
  else
    payment_service();
}
