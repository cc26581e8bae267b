// client-crash-driver: a billing endpoint that sends N orders through invoke_http to the echo
// server and runs until everything is done. Restartable: it seeds its orders once, then picks up
// where it was; several may run at once on one PostgreSQL database. Usage: client-crash-driver DB
// PORT N [in-handler] [queued-follow-up], where DB is a SQLite file or
// "--postgres=CONNINFO" (the endpoint, its tables and journal in that PostgreSQL database).
// "in-handler" makes each handler wait for its PUT's answer (put_wait::in_handler);
// "queued-follow-up" queues each follow-up to GET its response, instead of running it with the
// POST's answer (follow_up_with_post_answer off).
// Exit 0 when quiet, 3 on timeout.

#include <exactly/client/endpoint.hpp>

#include <test_db.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

int main(int argc, char** argv) {
  bool in_handler = false, put_never = false, queued_follow_up = false, known = argc >= 4;
  for (int i = 4; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "in-handler")
      in_handler = true;
    else if (flag == "put-never")
      put_never = true;
    else if (flag == "queued-follow-up")
      queued_follow_up = true;
    else
      known = false;
  }
  if (!known) {
    std::cerr << "usage: client-crash-driver DB|--postgres=CONNINFO PORT N [in-handler|put-never]"
                 " [queued-follow-up]\n";
    return 2;
  }
  using exactly::test::run_sql;
  const std::string where = argv[1];
  const std::string port = argv[2];
  const int n = std::atoi(argv[3]);
  const std::string pg_flag = "--postgres=";
  std::unique_ptr<exactly::sqlite::connection> lite;
  std::unique_ptr<exactly::pg::connection> pg;
  if (where.rfind(pg_flag, 0) == 0)
    pg = std::make_unique<exactly::pg::connection>(
        exactly::pg::options{where.substr(pg_flag.size())});
  else
    lite = std::make_unique<exactly::sqlite::connection>(where);
  const exactly::database db = lite ? exactly::database(*lite) : exactly::database(*pg);
  const char* tables =
      "CREATE TABLE IF NOT EXISTS seeded (one INTEGER PRIMARY KEY);"
      "CREATE TABLE IF NOT EXISTS bills (order_id TEXT PRIMARY KEY);"
      "CREATE TABLE IF NOT EXISTS results (order_id TEXT PRIMARY KEY, status INTEGER,"
      " n INTEGER NOT NULL)";
  if (pg) {  // processes starting at once on one PostgreSQL database create them one at a time
    exactly::pg::transaction tx(*pg);
    pg->query("SELECT pg_advisory_xact_lock(4242)");
    pg->exec(tables);
    tx.commit();
  } else {
    lite->exec(tables);
  }
  exactly::client::endpoint ep(
      "billing", db,
      {.max_attempts = 100,
       .retry_base = std::chrono::milliseconds(5),
       .retry_cap = std::chrono::milliseconds(100),
       .transport = exactly::client::make_beast_transport(),
       // On restart, the crashed attempt's PUT is cleaned up at once.
       .orphan_grace = std::chrono::milliseconds(0),
       .wait_for_put = in_handler  ? exactly::client::put_wait::in_handler
                       : put_never ? exactly::client::put_wait::never
                                   : exactly::client::put_wait::before_commit,
       .follow_up_with_post_answer = !queued_follow_up});
  const std::string url = "http://127.0.0.1:" + port + "/vectors/echo/{id}";
  ep.on("bill", [&url](exactly::client::handler_context& ctx) {
    const std::string order = ctx.incoming().body.at("order");
    run_sql(ctx.database(), "INSERT INTO bills VALUES (?)", order);
    ctx.invoke_http(url, R"({"status":200,"reply":")" + order + "\"}", "application/json",
                    {.type = "bill_result", .body = {{"order", order}}});
  });
  ep.on("bill_result", [](exactly::client::handler_context& ctx) {
    run_sql(ctx.database(),
            "INSERT INTO results VALUES (?, ?, 1)"
            " ON CONFLICT(order_id) DO UPDATE SET n = results.n + 1",
            ctx.incoming().body.at("order").get<std::string>(),
            static_cast<int>(ctx.response()->status));
  });
  {
    exactly::database_transaction tx(db);
    // Seeded once: a process seeding while another has already consumed some orders would queue
    // them again (an id is deduplicated only while queued).
    if (pg)
      pg->query("SELECT pg_advisory_xact_lock(4242)");
    if (exactly::test::query_int(db, "SELECT one FROM seeded") < 0) {
      for (int i = 0; i < n; ++i) {
        exactly::client::send_in_transaction(db, "billing",
                                             {.id = "order-" + std::to_string(i),
                                              .type = "bill",
                                              .body = {{"order", "o-" + std::to_string(i)}}});
      }
      // Processes seeding at once: the second waits for the first's row, then inserts nothing.
      exactly::test::exec_sql(db, "INSERT INTO seeded VALUES (1) ON CONFLICT DO NOTHING");
    }
    tx.commit();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    ep.run_until_idle();
    if (ep.queued() == 0 && ep.pending_invocations() == 0)
      return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 3;
}
