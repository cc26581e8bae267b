// orders-billing: the billing sample's Orders and Billing endpoints, run by the client runtime on
// one SQLite database until SIGINT/SIGTERM. Prints "running" as its first line once its workers
// are up. Orders are queued into the same database by `billing-demo` (or by orders::submit).

#include "orders_app.hpp"

#include <exactly/client/runtime.hpp>

#include <CLI/CLI.hpp>
#include <layered_config.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>

int main(int argc, char** argv) {
  CLI::App app{"orders-billing: the Orders and Billing endpoints of the billing sample"};
  exactly::cli_config::layered_config layers(app);
  std::string db = "orders.db";
  exactly::samples::orders::settings s{.payment_url = "http://127.0.0.1:8081"};
  int workers = 4;
  bool normal = false;
  app.add_option("--db", db, "SQLite database of both endpoints");
  int max_attempts = 60;  // patient: a payment service that restarts sends no order there
  app.add_option("--max-attempts", max_attempts, "handler attempts before the error queue")
      ->check(CLI::Range(1, 1'000'000));
  std::string postgres;
  app.add_option("--postgres", postgres,
                 "keep both endpoints in PostgreSQL instead (a libpq connection string); several "
                 "processes may share it, each message handled by one of them");
  app.add_option("--payment-url", s.payment_url, "http://HOST:PORT of the payment service");
  layers.secret(app.add_option(
      "--payment-api-key,--api-key", s.api_key,
      "bearer key for the payment service (--api-key: its former name); on the command line for "
      "quick local runs only (other users see it in ps): prefer the environment variable "
      "EXACTLY_PAYMENT_API_KEY or the config file. None: no key"));
  app.add_option("--workers", workers, "concurrent handlers")->check(CLI::Range(1, 256));
  app.add_flag("--synchronous-normal", normal,
               "opt out of synchronous=FULL (faster; a power cut may lose recent commits)");
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;
  if (layers.source_of("payment-api-key") == exactly::cli_config::source::command_line) {
    std::cerr << "orders-billing: warning: --payment-api-key puts the key on the command line, "
                 "where other users of this machine see it (ps); use EXACTLY_PAYMENT_API_KEY "
                 "outside quick local runs\n";
  }

  // Patient retries: a payment service that restarts must not send orders to the error queue.
  s.endpoint.max_attempts = max_attempts;
  s.endpoint.retry_base = std::chrono::milliseconds(20);
  s.endpoint.retry_cap = std::chrono::milliseconds(1000);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);  // before the workers start, so they inherit it
  try {
    s.endpoint.transport = exactly::samples::orders::make_transport(s);  // shared by the workers
    std::optional<exactly::client::runtime> rt;
    if (postgres.empty()) {
      exactly::sqlite::options o;
      if (normal)
        o.sync = exactly::sqlite::synchronous::normal;
      {
        exactly::sqlite::connection c(db, o);
        exactly::samples::orders::create_schema(c);
      }
      rt.emplace(
          db, o,
          [&s](exactly::sqlite::connection& c) {
            return exactly::samples::orders::make_endpoints(c, s);
          },
          exactly::client::runtime_options{.workers = workers});
    } else {
      const exactly::pg::options o{postgres, !normal};
      {
        exactly::pg::connection c(o);
        exactly::samples::orders::create_schema(c);
      }
      rt.emplace(
          o,
          [&s](exactly::pg::connection& c) {
            return exactly::samples::orders::make_endpoints(c, s);
          },
          exactly::client::runtime_options{.workers = workers});
    }
    rt->start();
    std::cout << "running" << std::endl;
    int sig = 0;
    sigwait(&set, &sig);
    rt->stop();
  } catch (const std::exception& e) {
    std::cerr << "orders-billing: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
