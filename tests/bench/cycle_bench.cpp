// cycle-bench: full protocol cycles (PUT, POST, GET, DELETE) per second against the echo
// connector, beside a plain POST handler doing one SQLite insert on the same server, storage
// thread and durability setting, measured in the same run. Prints a table; no assertions.

#include <echo_server.hpp>
#include <http_client.hpp>

#include <exactly/client/endpoint.hpp>
#include <exactly/client/runtime.hpp>
#include <exactly/common/request_id.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

using namespace exactly;
using clock_type = std::chrono::steady_clock;

struct result {
  double ops_per_s = 0, p50_ms = 0, p99_ms = 0;
  long ops = 0, errors = 0;
};

template <class Op>
result measure(int concurrency, double seconds, std::uint16_t port, Op op) {
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> lat(concurrency);
  std::vector<long> errors(concurrency, 0);
  std::vector<std::thread> threads;
  const auto t0 = clock_type::now();
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&, i] {
      test::http_client c(port);
      while (!stop.load(std::memory_order_relaxed)) {
        const auto s = clock_type::now();
        if (!op(c))
          ++errors[i];
        lat[i].push_back(std::chrono::duration<double, std::milli>(clock_type::now() - s).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads)
    t.join();
  const double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<double> all;
  result r;
  for (int i = 0; i < concurrency; ++i) {
    all.insert(all.end(), lat[i].begin(), lat[i].end());
    r.errors += errors[i];
  }
  std::sort(all.begin(), all.end());
  r.ops = static_cast<long>(all.size());
  r.ops_per_s = static_cast<double>(all.size()) / elapsed;
  if (!all.empty()) {
    r.p50_ms = all[all.size() / 2];
    r.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cycle-bench: protocol cycles vs a plain POST on loopback"};
  double seconds = 5;
  std::vector<int> concurrency = {1, 32};
  bool relaxed = false;
  int e2e_orders = 500;
  std::vector<int> e2e_workers = {1, 64};
  app.add_option("--e2e-orders", e2e_orders, "invocations through the client runtime; 0 skips");
  app.add_option("--e2e-workers", e2e_workers, "handler workers, one run per value");
  app.add_option("--seconds", seconds, "measured duration of each scenario");
  app.add_option("--concurrency", concurrency, "client connections, one run per value");
  app.add_flag("--synchronous-normal", relaxed, "opt out of synchronous=FULL");
  CLI11_PARSE(app, argc, argv);

  test::echo_server_config cfg;
  cfg.max_staged_per_principal = 1'000'000;
  cfg.synchronous_normal = relaxed;
  test::echo_server server(cfg);
  const std::vector<std::pair<std::string, std::string>> auth = {
      {"Authorization", "Bearer alice-key"}, {"Content-Type", "application/json"}};
  const std::string body = R"({"status":200,"reply":"ok"})";

  auto plain = [&](test::http_client& c) {
    const std::string id = request_id::mint().to_string();
    return c.request("POST", "/plain/" + id, body, auth).status == 200;
  };
  auto cycle = [&](test::http_client& c) {
    const std::string id = request_id::mint(server.now_ms()).to_string();
    const std::string path = "/vectors/echo/" + id;
    return c.request("PUT", path, body, auth).status == 201 &&
           c.request("POST", path, "", auth).status == 200 &&
           c.request("GET", path, "", auth).status == 200 &&
           c.request("DELETE", path, "", auth).status == 204;
  };

  std::printf("durability: synchronous=%s, WAL; %g s per scenario; %u cores\n",
              relaxed ? "NORMAL" : "FULL", seconds, std::thread::hardware_concurrency());
  std::printf("%-6s %-5s %10s %10s %10s %8s\n", "conc", "kind", "ops/s", "p50 ms", "p99 ms",
              "errors");
  for (int c : concurrency) {
    measure(c, std::min(1.0, seconds), server.port(), plain);  // warm-up
    const result p = measure(c, seconds, server.port(), plain);
    const result y = measure(c, seconds, server.port(), cycle);
    std::printf("%-6d %-5s %10.0f %10.2f %10.2f %8ld\n", c, "plain", p.ops_per_s, p.p50_ms,
                p.p99_ms, p.errors);
    std::printf("%-6d %-5s %10.0f %10.2f %10.2f %8ld\n", c, "cycle", y.ops_per_s, y.p50_ms,
                y.p99_ms, y.errors);
    std::printf("%-6d cycle/plain ops ratio: %.3f\n", c, y.ops_per_s / p.ops_per_s);
  }
  for (int workers : e2e_workers) {
    if (e2e_orders <= 0)
      break;
    // The client runtime end to end: handler + PUT, POST, follow-up + GET, DELETE, all durable.
    test::temp_dir dir;
    const std::string path = (dir.path() / "client.db").string();
    const sqlite::options db_opts{.sync = relaxed ? sqlite::synchronous::normal
                                                  : sqlite::synchronous::full};
    sqlite::connection db(path, db_opts);
    db.exec("CREATE TABLE done (id TEXT PRIMARY KEY)");
    {
      client::queue_store queues(db);
      sqlite::transaction tx(db);
      for (int i = 0; i < e2e_orders; ++i) {
        queues.enqueue("billing", {.id = std::to_string(i), .type = "bill", .body = nullptr}, 0);
      }
      tx.commit();
    }
    const std::string url =
        "http://127.0.0.1:" + std::to_string(server.port()) + "/vectors/echo/{id}";
    std::shared_ptr<client::http_transport> transport = client::make_beast_transport(
        {.keys = {{"127.0.0.1:" + std::to_string(server.port()), "alice-key"}},
         .max_per_destination = static_cast<std::size_t>(workers)});  // shared by the workers
    auto setup = [&](sqlite::connection& c) {
      std::vector<std::unique_ptr<client::endpoint>> eps;
      eps.push_back(std::make_unique<client::endpoint>(
          "billing", c, client::endpoint_options{.transport = transport}));
      eps[0]->on("bill", [url, &body](client::handler_context& ctx) {
        ctx.invoke_http(url, body, "application/json", {.type = "done", .body = ctx.incoming().id});
      });
      eps[0]->on("done", [](client::handler_context& ctx) {
        ctx.db().prepare("INSERT INTO done VALUES (?)").bind(1, ctx.incoming().body.dump()).run();
      });
      return eps;
    };
    const auto t0 = clock_type::now();
    client::runtime rt(path, db_opts, setup,
                       {.workers = workers, .idle_poll = std::chrono::milliseconds(1)});
    rt.start();
    while (*db.query_int64("SELECT count(*) FROM done") < e2e_orders ||
           *db.query_int64("SELECT count(*) FROM exactly_invocations") > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    rt.stop();
    std::printf("e2e (client runtime, %d handler workers): %d invocations in %.2f s = %.0f/s\n",
                workers, e2e_orders, s, e2e_orders / s);
  }
  return 0;
}
