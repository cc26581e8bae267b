// The README's client example, compiled with the project so it cannot drift.

#include <exactly/client/endpoint.hpp>

#include <thread>

int main() {
  exactly::sqlite::connection db("billing.db");  // queues, outbox and the user's state, together
  db.exec("CREATE TABLE IF NOT EXISTS bills (order_id TEXT PRIMARY KEY, status INTEGER)");
  exactly::client::endpoint billing("billing", db,
                                    {.transport = exactly::client::make_beast_transport(
                                         {.keys = {{"127.0.0.1:8080", "secret"}}})});

  // PUTs the body now; the POST and the follow-up commit with this handler, or not at all.
  billing.on("bill_customer", [](exactly::client::handler_context& ctx) {
    const auto& order = ctx.incoming().body;
    ctx.invoke_http(
        "http://127.0.0.1:8080/payment/authorize/{id}",
        nlohmann::json{{"customer", order["customer"]}, {"amount", order["amount"]}}.dump(),
        "application/json", {.type = "authorize_response", .body = {{"order", order["order"]}}});
  });
  // Runs once per invocation with the stored response (a business 402 is a normal outcome).
  billing.on("authorize_response", [](exactly::client::handler_context& ctx) {
    ctx.db()
        .prepare("INSERT INTO bills VALUES (?, ?)")
        .bind_all(ctx.incoming().body["order"].get<std::string>(), ctx.response()->status)
        .run();
  });

  billing.send("billing", {.type = "bill_customer",
                           .body = {{"order", "o-1"}, {"customer", "c-1"}, {"amount", 42}}});
  for (;;) {  // queue and outbox driven by hand; client::runtime runs them on worker threads
    billing.run_until_idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}
