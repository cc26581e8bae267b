// billing-demo: runs the billing sample end to end as separate processes (payment-service, the
// fault proxy, orders-billing), submits orders, SIGKILLs and restarts the services at random
// moments, waits until everything is quiet, then prints a reconciliation. On PostgreSQL, several
// payment-service instances (behind the proxy) and several orders-billing processes share one
// database, and PostgreSQL itself is crashed and restarted once. Exit status 0 when it is clean,
// 1 on any violation, 2 on a usage or start-up error.

#include "reconcile.hpp"
#include "service.hpp"

#include <fault_flags.hpp>
#include <orders_app.hpp>
#include <pg_cluster_tool.hpp>

#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using exactly::samples::demo::service;
namespace tools = exactly::tools;

namespace {

struct options {
  int orders = 2000;
  int customers = 20;
  std::int64_t opening_balance = 200'000;
  std::int64_t max_amount = 5'000;
  int workers = 4;
  int kills = 3;  // per service
  bool no_faults = false;
  tools::fault_options faults{.drop_request = 0.02,
                              .drop_response = 0.02,
                              .reset = 0.01,
                              .delay = 0.02,
                              .delay_ms = 50,
                              .duplicate = 0.02};
  std::uint64_t seed = 0;  // 0 = random
  int timeout_seconds = 600;
  std::string work_dir, bin_dir;
  bool keep = false;
  std::string engine = "sqlite";
  std::string postgres;  // a server of the user's; "" = a throwaway cluster started here
  int payment_instances = 1, billing_processes = 1;
  int drill_seconds = 0;  // > 0: after a clean run, the operator drill (see drill())
};

// Where the two sides keep their state: two SQLite files, or two schemas of one PostgreSQL
// database (the one the services share).
struct stores {
  std::string orders_db, payment_db;                    // SQLite
  std::string conninfo, orders_schema, payment_schema;  // PostgreSQL
  bool postgres() const { return !conninfo.empty(); }
  std::string in_schema(const std::string& schema) const {
    return conninfo + " options='-c search_path=" + schema + "'";
  }
  // A service's command-line arguments naming its side's store.
  std::vector<std::string> args(bool orders) const {
    if (postgres())
      return {"--postgres", in_schema(orders ? orders_schema : payment_schema)};
    return {"--db", orders ? orders_db : payment_db};
  }
  exactly::samples::demo::reconciliation reconcile(std::int64_t opening, int orders) const {
    if (postgres()) {
      return exactly::samples::demo::reconcile_postgres(conninfo, orders_schema, payment_schema,
                                                        opening, orders);
    }
    return exactly::samples::demo::reconcile(orders_db, payment_db, opening, orders);
  }
};

// A service with kills planned at fractions of the run's progress.
struct killable {
  service* svc;
  std::vector<double> at;  // progress fractions, ascending
  int done = 0;
};

std::string binary(const options& o, const std::string& name, const char* built) {
  return o.bin_dir.empty() ? std::string(built) : (fs::path(o.bin_dir) / name).string();
}

std::uint16_t port_of(const std::string& line) {
  return static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
}

// Restarts a killed service, retrying while its old port is still being released.
void restart(service& s) {
  for (int attempt = 1;; ++attempt) {
    try {
      s.start();
      return;
    } catch (const std::exception&) {
      if (attempt == 20)
        throw;
      std::this_thread::sleep_for(100ms);
    }
  }
}

// The demo's schemas on PostgreSQL, created empty (dropped first if a run left them behind).
void fresh_schemas(const stores& st) {
  exactly::pg::connection admin({st.conninfo});
  for (const std::string& schema : {st.orders_schema, st.payment_schema})
    admin.exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema);
}

// Orders finished so far (-1 while the database cannot be read, e.g. PostgreSQL restarting).
std::int64_t finished_orders(const exactly::database& db) {
  try {
    return db.query_int64("SELECT count(*) FROM orders WHERE status != 'submitted'").value_or(0);
  } catch (const exactly::storage_error&) {
    return -1;
  }
}

// A fresh random API key for this run: 64 hex digits (not drawn from the seeded generator, so a
// seed repeats the same orders and faults with a new key).
std::string fresh_key() {
  std::random_device device;
  std::string key;
  for (int i = 0; i < 8; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(device()));
    key += part;
  }
  return key;
}

// Writes `text` and a newline to `path`, readable by its owner only (mode 600): a secret for a
// service's key file option, off its command line.
void write_secret_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  out << text << '\n';
  if (!out.flush())
    throw std::runtime_error("cannot write " + path.string());
}

// Writes <dir>/payment-keys naming `principal` by `key`, for payment-service's --api-keys-file.
fs::path write_keys_file(const fs::path& dir, const std::string& principal,
                         const std::string& key) {
  const fs::path path = dir / "payment-keys";
  write_secret_file(path, principal + ':' + key);
  return path;
}

// Reads, until it is `n`, the count `sql` gives on SQLite database `path`; false on timeout.
bool wait_for_count(const std::string& path, const char* sql, std::int64_t n,
                    std::chrono::steady_clock::time_point deadline) {
  exactly::sqlite::connection c(path);
  while (c.query_int64(sql).value_or(0) != n) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// The operator drill (docs/operations.md), after a clean run on SQLite: two failures an operator
// must repair, made while the services run, then a wait until the operator has repaired them.
//  1. payment-service is down while two orders are billed, and orders-billing runs impatient
//     (--max-attempts 1): their bill_customer messages go to the client's error queue.
//  2. payment-service's ledger is frozen (a trigger refuses inserts) and the service runs with
//     --outbox-max-attempts 1: the settlements of two more orders become dead letters.
// payment-service serves its operator page meanwhile: its address is in <dir>/payment-url, its key
// in <dir>/operator-page-key.
// Then the services keep running until the reconciliation of every order is clean (the operator
// unfroze the ledger, replayed the dead letters and requeued the errors) or the drill times out.
int drill(const options& o, const stores& st, service& payment, std::uint16_t payment_port,
          service& billing, const std::string& billing_bin, const fs::path& dir) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.drill_seconds);
  std::vector<std::string> pay_argv = {binary(o, "payment-service", EXACTLY_PAYMENT_SERVICE),
                                       "--listen",
                                       "127.0.0.1:" + std::to_string(payment_port),
                                       "--db",
                                       st.payment_db,
                                       "--initial-balance-cents",
                                       std::to_string(o.opening_balance),
                                       "--api-keys-file",
                                       (dir / "payment-keys").string(),
                                       "--outbox-max-attempts",
                                       "1",
                                       "--operator-page",
                                       "--operator-page-key-file",
                                       (dir / "operator-page-key").string()};
  write_secret_file(dir / "operator-page-key", fresh_key());
  const std::string payment_url = "http://127.0.0.1:" + std::to_string(payment_port);
  {
    std::ofstream url(dir / "payment-url", std::ios::trunc);
    url << payment_url << '\n';
  }
  payment.set_argv(pay_argv);
  billing.set_argv({billing_bin, "--db", st.orders_db, "--payment-url", payment_url, "--workers",
                    std::to_string(o.workers), "--max-attempts", "1"});
  exactly::sqlite::connection orders_db(st.orders_db);
  const auto submit = [&](int from, int to) {
    std::vector<exactly::samples::orders::order> batch;
    for (int i = from; i <= to; ++i)
      batch.push_back({"drill-order-" + std::to_string(i), "customer-001", 100});
    exactly::samples::orders::submit(orders_db, batch);
  };
  std::cout << "\noperator drill\n  payment-service down, orders-billing with --max-attempts 1: "
               "billing 2 orders\n"
            << std::flush;
  billing.start();
  submit(1, 2);
  if (!wait_for_count(st.orders_db, "SELECT count(*) FROM exactly_error_queue", 2, deadline)) {
    std::cout << "drill: the 2 orders did not reach the error queue\n";
    return 1;
  }
  std::cout << "  ledger frozen, payment-service with --outbox-max-attempts 1: billing 2 more\n"
            << std::flush;
  {
    exactly::sqlite::connection pay(st.payment_db);
    pay.exec(
        "CREATE TRIGGER ledger_frozen BEFORE INSERT ON ledger BEGIN"
        " SELECT RAISE(ABORT, 'ledger frozen for maintenance'); END");
  }
  restart(payment);
  submit(3, 4);
  if (!wait_for_count(st.payment_db, "SELECT count(*) FROM exactly_server_dead_letters", 2,
                      deadline)) {
    std::cout << "drill: the 2 settlements did not become dead letters\n";
    return 1;
  }
  std::cout << "drill ready: 2 dead letters in " << st.payment_db << ", 2 error-queue entries in "
            << st.orders_db << "; the services run until they are repaired (at most "
            << o.drill_seconds << " s)\n"
            << std::flush;
  const std::int64_t orders = o.orders + 4;
  exactly::samples::demo::reconciliation r;
  while (std::chrono::steady_clock::now() < deadline) {
    r = st.reconcile(o.opening_balance, orders);
    if (exactly::samples::demo::violations(r).empty())
      break;
    std::this_thread::sleep_for(100ms);
  }
  billing.stop();
  payment.stop();
  r = st.reconcile(o.opening_balance, orders);
  std::cout << "\nreconciliation after the drill\n";
  exactly::samples::demo::print(std::cout, r, 5);
  const auto v = exactly::samples::demo::violations(r);
  if (v.empty()) {
    std::cout << "\nRESULT: repaired: every order charged exactly once, nothing left\n";
    return 0;
  }
  std::cout << "\nRESULT: NOT REPAIRED after " << o.drill_seconds << " s\n";
  for (const std::string& s : v)
    std::cout << "  - " << s << "\n";
  return 1;
}

int run(const options& o) {
  const std::uint64_t seed = o.seed != 0 ? o.seed : std::random_device{}();
  std::mt19937_64 rng(seed);
  const fs::path dir = o.work_dir.empty()
                           ? fs::temp_directory_path() / ("billing-demo-" + std::to_string(seed))
                           : fs::path(o.work_dir);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const bool on_postgres = o.engine == "postgres";
  std::optional<exactly::tools::pg_cluster> cluster;  // ours, crashed and restarted once
  stores st;
  if (on_postgres) {
    if (o.postgres.empty())
      cluster.emplace();
    st.conninfo = o.postgres.empty() ? cluster->conninfo() : o.postgres;
    st.orders_schema = "billing_demo_orders";
    st.payment_schema = "billing_demo_payment";
    fresh_schemas(st);
  } else {
    st.orders_db = (dir / "orders.db").string();
    st.payment_db = (dir / "payment.db").string();
  }
  // One principal, "billing", for every orders-billing process: the accounts its first
  // authorizations open belong to it, so any of them (and any restart) may debit them.
  const std::string key = fresh_key();
  const fs::path keys_file = write_keys_file(dir, "billing", key);
  ::setenv("EXACTLY_PAYMENT_API_KEY", key.c_str(), 1);  // orders-billing's, off its command line

  std::cout << "billing demo: " << o.orders << " orders for " << o.customers
            << " customers, opening balance " << o.opening_balance << " cents, amounts 1.."
            << o.max_amount << " cents, " << o.workers << " workers, seed " << seed << "\n"
            << "engine: " << o.engine;
  if (on_postgres) {
    std::cout << " (" << (cluster ? "a throwaway cluster, crashed and restarted once" : o.postgres)
              << "), " << o.payment_instances << " payment-service instance(s), "
              << o.billing_processes << " orders-billing process(es)";
  }
  std::cout << "\nfaults: ";
  if (o.no_faults)
    std::cout << "none";
  else
    std::cout << "drop-request " << o.faults.drop_request << ", drop-response "
              << o.faults.drop_response << ", reset " << o.faults.reset << ", delay "
              << o.faults.delay << " (" << o.faults.delay_ms << " ms), duplicate "
              << o.faults.duplicate;
  std::cout << "; kills: " << o.kills << " per process\nwork dir: " << dir.string() << "\n\n"
            << std::flush;

  // The payment-service instances, each pinned to the port it got at its first start.
  const std::string payment_bin = binary(o, "payment-service", EXACTLY_PAYMENT_SERVICE);
  std::vector<std::unique_ptr<service>> payments;
  std::vector<std::uint16_t> payment_ports;
  for (int i = 0; i < o.payment_instances; ++i) {
    std::vector<std::string> args = {payment_bin, "--listen", "127.0.0.1:0"};
    for (std::string& a : st.args(false))
      args.push_back(std::move(a));
    args.insert(args.end(), {"--initial-balance-cents", std::to_string(o.opening_balance)});
    args.insert(args.end(), {"--api-keys-file", keys_file.string()});
    const std::string name =
        o.payment_instances == 1 ? "payment-service" : "payment-service-" + std::to_string(i + 1);
    payments.push_back(std::make_unique<service>(name, args, dir));
    payment_ports.push_back(port_of(payments.back()->start()));
    args[2] = "127.0.0.1:" + std::to_string(payment_ports.back());  // restarts keep the port
    payments.back()->set_argv(args);
  }

  std::optional<service> proxy;
  std::vector<std::uint16_t> target_ports = payment_ports;
  if (!o.no_faults) {
    std::vector<std::string> args = {binary(o, "fault-proxy", EXACTLY_FAULT_PROXY), "--seed",
                                     std::to_string(seed)};
    for (std::uint16_t port : payment_ports)
      args.insert(args.end(), {"--upstream", "127.0.0.1:" + std::to_string(port)});
    for (std::string& a : tools::fault_flag_args(o.faults))
      args.push_back(std::move(a));
    proxy.emplace("fault-proxy", args, dir);
    target_ports = {port_of(proxy->start())};
  }
  std::vector<std::unique_ptr<service>> billings;
  for (int i = 0; i < o.billing_processes; ++i) {
    std::vector<std::string> args = {binary(o, "orders-billing", EXACTLY_ORDERS_BILLING)};
    for (std::string& a : st.args(true))
      args.push_back(std::move(a));
    args.insert(args.end(),
                {"--payment-url",
                 "http://127.0.0.1:" + std::to_string(target_ports[i % target_ports.size()]),
                 "--workers", std::to_string(o.workers)});
    const std::string name =
        o.billing_processes == 1 ? "orders-billing" : "orders-billing-" + std::to_string(i + 1);
    billings.push_back(std::make_unique<service>(name, args, dir));
    billings.back()->start();
  }

  // The orders, and when each process will be killed (as fractions of orders finished).
  std::vector<exactly::samples::orders::order> batch;
  std::uniform_int_distribution<int> customer(1, o.customers);
  std::uniform_int_distribution<std::int64_t> amount(1, o.max_amount);
  for (int i = 1; i <= o.orders; ++i) {
    char id[32], who[32];
    std::snprintf(id, sizeof id, "order-%06d", i);
    std::snprintf(who, sizeof who, "customer-%03d", customer(rng));
    batch.push_back({id, who, amount(rng)});
  }
  std::uniform_real_distribution<double> moment(0.05, 0.85);
  std::vector<killable> plan;
  for (auto& p : payments)
    plan.push_back({p.get(), {}});
  for (auto& b : billings)
    plan.push_back({b.get(), {}});
  for (killable& k : plan) {
    for (int i = 0; i < o.kills; ++i)
      k.at.push_back(moment(rng));
    std::sort(k.at.begin(), k.at.end());
  }
  bool postgres_restarted = false;

  std::unique_ptr<exactly::sqlite::connection> watch_sqlite;
  std::unique_ptr<exactly::pg::connection> watch_pg;
  if (on_postgres)
    watch_pg = std::make_unique<exactly::pg::connection>(
        exactly::pg::options{st.in_schema(st.orders_schema)});
  else
    watch_sqlite = std::make_unique<exactly::sqlite::connection>(st.orders_db);
  const exactly::database watch =
      on_postgres ? exactly::database(*watch_pg) : exactly::database(*watch_sqlite);
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::seconds(o.timeout_seconds);
  if (on_postgres) {  // the tables of the orders-billing processes, before the first submission
    while (watch.query_int64("SELECT count(*) FROM pg_tables WHERE schemaname = ? AND tablename"
                             " IN ('orders', 'exactly_queue')",
                             st.orders_schema)
                   .value_or(0) != 2 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
  }
  exactly::samples::orders::submit(watch, batch);
  std::uniform_int_distribution<int> pause_ms(0, 300);
  std::int64_t finished = 0;
  double last_report = 0;
  while (finished < o.orders && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    finished = std::max(finished, finished_orders(watch));
    const double progress = static_cast<double>(finished) / o.orders;
    for (killable& k : plan) {
      // Every kill due by now, even several when the orders went fast since the last look.
      while (k.done < static_cast<int>(k.at.size()) && k.at[k.done] <= progress) {
        k.svc->kill_hard();
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
        restart(*k.svc);
        ++k.done;
        std::cout << "  killed and restarted " << k.svc->name() << " at " << finished << "/"
                  << o.orders << " orders\n"
                  << std::flush;
      }
    }
    if (cluster && !postgres_restarted && progress >= 0.5) {
      cluster->stop(true);  // a crash: no shutdown checkpoint
      std::this_thread::sleep_for(std::chrono::milliseconds(500 + pause_ms(rng)));
      cluster->start();
      postgres_restarted = true;
      std::cout << "  crashed and restarted PostgreSQL at " << finished << "/" << o.orders
                << " orders\n"
                << std::flush;
    }
    if (progress - last_report >= 0.25) {
      last_report = progress;
      std::cout << "  " << finished << "/" << o.orders << " orders finished\n" << std::flush;
    }
  }
  // Quiet: every order finished and nothing left in flight on either side.
  exactly::samples::demo::reconciliation r;
  for (;;) {
    try {
      r = st.reconcile(o.opening_balance, o.orders);
      if (exactly::samples::demo::quiet(r))
        break;
    } catch (const exactly::storage_error&) {  // PostgreSQL still coming back
    }
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(100ms);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  for (auto& b : billings)
    b->stop();
  std::string fault_counts;
  if (proxy) {
    proxy->stop();
    const std::string out = proxy->output();
    const auto nl = out.find('\n');
    fault_counts = nl == std::string::npos ? "" : out.substr(nl + 1);
    if (!fault_counts.empty() && fault_counts.back() == '\n')
      fault_counts.pop_back();
  }
  for (auto& p : payments)
    p->stop();
  r = st.reconcile(o.opening_balance, o.orders);

  std::cout << "\nreconciliation\n";
  exactly::samples::demo::print(std::cout, r, 25);
  std::cout << "\n  faults injected: " << (proxy ? fault_counts : "none") << "\n  kills:";
  bool every_kill = true;
  for (const killable& k : plan) {
    std::cout << " " << k.svc->name() << " " << k.done;
    every_kill = every_kill && k.done == o.kills;
  }
  if (cluster)
    std::cout << "; PostgreSQL crashed and restarted " << (postgres_restarted ? 1 : 0);
  std::cout << "\n";
  std::printf("  elapsed %.1f s, %.1f orders/s\n", elapsed, o.orders / elapsed);
  const auto v = exactly::samples::demo::violations(r);
  if (std::chrono::steady_clock::now() > deadline)
    std::cout << "\ntimed out after " << o.timeout_seconds << " s\n";
  const bool every_fault = every_kill && (!cluster || postgres_restarted);
  if (v.empty() && every_fault) {
    std::cout << "\nRESULT: clean: every order charged exactly once, nothing lost, nothing left\n";
    if (o.drill_seconds > 0) {
      return drill(o, st, *payments.front(), payment_ports.front(), *billings.front(),
                   binary(o, "orders-billing", EXACTLY_ORDERS_BILLING), dir);
    }
    if (!o.keep)
      fs::remove_all(dir);
    return 0;
  }
  std::cout << "\nRESULT: VIOLATIONS\n";
  for (const std::string& s : v)
    std::cout << "  - " << s << "\n";
  if (!every_fault)
    std::cout << "  - not every planned kill or restart happened\n";
  std::cout << "  logs and databases kept in " << dir.string() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"billing-demo: the billing sample end to end under faults and kills, reconciled"};
  options o;
  app.add_option("--orders", o.orders, "orders to submit")->check(CLI::Range(1, 10'000'000));
  app.add_option("--customers", o.customers, "customers the orders are spread over")
      ->check(CLI::Range(1, 100'000));
  app.add_option("--opening-balance-cents", o.opening_balance, "each account's opening balance");
  app.add_option("--max-amount-cents", o.max_amount, "order amounts are uniform in 1..this")
      ->check(CLI::Range(1, 1'000'000'000));
  app.add_option("--workers", o.workers, "concurrent handlers in orders-billing");
  app.add_option("--kills", o.kills, "SIGKILL and restart each service this many times")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--no-faults", o.no_faults, "no fault proxy between Billing and Payment");
  tools::add_fault_flags(app, o.faults);
  app.add_option("--seed", o.seed, "seed of orders, kill moments and faults (0 = random)");
  app.add_option("--timeout-seconds", o.timeout_seconds, "give up (and fail) after this long");
  app.add_option("--work-dir", o.work_dir, "where databases and logs go (default: a temp dir)");
  app.add_option("--bin-dir", o.bin_dir, "where the service binaries are (default: the build)");
  app.add_flag("--keep", o.keep, "keep the work dir after a clean run");
  app.add_option("--engine", o.engine,
                 "sqlite (a file per side) or postgres (one database shared by every process)")
      ->check(CLI::IsMember({"sqlite", "postgres"}));
  app.add_option("--postgres", o.postgres,
                 "with --engine postgres: a libpq connection string of a server to use (its "
                 "schemas billing_demo_orders and billing_demo_payment are replaced); default: "
                 "a throwaway cluster, crashed and restarted once during the run");
  app.add_option("--payment-instances", o.payment_instances,
                 "payment-service processes over one database (postgres), behind the proxy")
      ->check(CLI::Range(1, 16));
  app.add_option("--billing-processes", o.billing_processes,
                 "orders-billing processes consuming one queue (postgres)")
      ->check(CLI::Range(1, 16));
  app.add_option("--drill-seconds", o.drill_seconds,
                 "after a clean run on SQLite, force failures for an operator to repair (see "
                 "docs/operations.md) and wait at most this long for the repair; keeps the work "
                 "dir")
      ->check(CLI::Range(1, 86'400));
  CLI11_PARSE(app, argc, argv);
  if (o.drill_seconds > 0 &&
      (o.engine != "sqlite" || o.payment_instances > 1 || o.billing_processes > 1)) {
    std::cerr << "billing-demo: the operator drill runs on SQLite with one process per service\n";
    return 2;
  }
  if (o.engine != "postgres" && (o.payment_instances > 1 || o.billing_processes > 1)) {
    std::cerr << "billing-demo: several instances share one database: use --engine postgres\n";
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "billing-demo: " << e.what() << '\n';
    return 2;
  }
}
