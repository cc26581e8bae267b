// billing-demo: runs the billing sample end to end as separate processes (payment-service, the
// fault proxy, orders-billing), submits orders, SIGKILLs and restarts the services at random
// moments, waits until everything is quiet, then prints a reconciliation. Exit status 0 when it
// is clean, 1 on any violation, 2 on a usage or start-up error.

#include "reconcile.hpp"
#include "service.hpp"

#include <fault_flags.hpp>
#include <orders_app.hpp>

#include <exactly/common/sqlite.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
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

int run(const options& o) {
  const std::uint64_t seed = o.seed != 0 ? o.seed : std::random_device{}();
  std::mt19937_64 rng(seed);
  const fs::path dir = o.work_dir.empty()
                           ? fs::temp_directory_path() / ("billing-demo-" + std::to_string(seed))
                           : fs::path(o.work_dir);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string payment_db = (dir / "payment.db").string();
  const std::string orders_db = (dir / "orders.db").string();
  const std::string key = "billing-demo-key";

  std::cout << "billing demo: " << o.orders << " orders for " << o.customers
            << " customers, opening balance " << o.opening_balance << " cents, amounts 1.."
            << o.max_amount << " cents, " << o.workers << " workers, seed " << seed << "\n"
            << "faults: ";
  if (o.no_faults)
    std::cout << "none";
  else
    std::cout << "drop-request " << o.faults.drop_request << ", drop-response "
              << o.faults.drop_response << ", reset " << o.faults.reset << ", delay "
              << o.faults.delay << " (" << o.faults.delay_ms << " ms), duplicate "
              << o.faults.duplicate;
  std::cout << "; kills: " << o.kills << " per service\nwork dir: " << dir.string() << "\n\n"
            << std::flush;

  const std::string payment_bin = binary(o, "payment-service", EXACTLY_PAYMENT_SERVICE);
  std::vector<std::string> payment_args = {payment_bin,
                                           "--listen",
                                           "127.0.0.1:0",
                                           "--db",
                                           payment_db,
                                           "--initial-balance-cents",
                                           std::to_string(o.opening_balance),
                                           "--api-key",
                                           key};
  service payment("payment-service", payment_args, dir);
  const std::uint16_t payment_port = port_of(payment.start());
  payment_args[2] = "127.0.0.1:" + std::to_string(payment_port);  // restarts keep the port
  payment.set_argv(payment_args);

  std::optional<service> proxy;
  std::uint16_t target_port = payment_port;
  if (!o.no_faults) {
    std::vector<std::string> args = {binary(o, "fault-proxy", EXACTLY_FAULT_PROXY), "--upstream",
                                     "127.0.0.1:" + std::to_string(payment_port), "--seed",
                                     std::to_string(seed)};
    for (std::string& a : tools::fault_flag_args(o.faults))
      args.push_back(std::move(a));
    proxy.emplace("fault-proxy", args, dir);
    target_port = port_of(proxy->start());
  }
  service orders("orders-billing",
                 {binary(o, "orders-billing", EXACTLY_ORDERS_BILLING), "--db", orders_db,
                  "--payment-url", "http://127.0.0.1:" + std::to_string(target_port), "--api-key",
                  key, "--workers", std::to_string(o.workers)},
                 dir);
  orders.start();

  // The orders, and when each service will be killed (as fractions of orders finished).
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
  std::vector<killable> plan = {{&payment, {}}, {&orders, {}}};
  for (killable& k : plan) {
    for (int i = 0; i < o.kills; ++i)
      k.at.push_back(moment(rng));
    std::sort(k.at.begin(), k.at.end());
  }

  exactly::sqlite::connection watch(orders_db);
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::seconds(o.timeout_seconds);
  exactly::samples::orders::submit(watch, batch);
  std::uniform_int_distribution<int> pause_ms(0, 300);
  std::int64_t finished = 0;
  double last_report = 0;
  while (finished < o.orders && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    finished =
        watch.query_int64("SELECT count(*) FROM orders WHERE status != 'submitted'").value_or(0);
    const double progress = static_cast<double>(finished) / o.orders;
    for (killable& k : plan) {
      if (k.done < static_cast<int>(k.at.size()) && k.at[k.done] <= progress) {
        k.svc->kill_hard();
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
        restart(*k.svc);
        ++k.done;
        std::cout << "  killed and restarted " << k.svc->name() << " at " << finished << "/"
                  << o.orders << " orders\n"
                  << std::flush;
      }
    }
    if (progress - last_report >= 0.25) {
      last_report = progress;
      std::cout << "  " << finished << "/" << o.orders << " orders finished\n" << std::flush;
    }
  }
  // Quiet: every order finished and nothing left in flight on either side.
  exactly::samples::demo::reconciliation r;
  for (;;) {
    r = exactly::samples::demo::reconcile(orders_db, payment_db, o.opening_balance, o.orders);
    if (exactly::samples::demo::quiet(r) || std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(100ms);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  orders.stop();
  std::string fault_counts;
  if (proxy) {
    proxy->stop();
    const std::string out = proxy->output();
    const auto nl = out.find('\n');
    fault_counts = nl == std::string::npos ? "" : out.substr(nl + 1);
    if (!fault_counts.empty() && fault_counts.back() == '\n')
      fault_counts.pop_back();
  }
  payment.stop();
  r = exactly::samples::demo::reconcile(orders_db, payment_db, o.opening_balance, o.orders);

  std::cout << "\nreconciliation\n";
  exactly::samples::demo::print(std::cout, r, 25);
  std::cout << "\n  faults injected: " << (proxy ? fault_counts : "none") << "\n"
            << "  kills: payment-service " << plan[0].done << ", orders-billing " << plan[1].done
            << "\n";
  std::printf("  elapsed %.1f s, %.1f orders/s\n", elapsed, o.orders / elapsed);
  const auto v = exactly::samples::demo::violations(r);
  if (std::chrono::steady_clock::now() > deadline)
    std::cout << "\ntimed out after " << o.timeout_seconds << " s\n";
  if (v.empty() && plan[0].done == o.kills && plan[1].done == o.kills) {
    std::cout << "\nRESULT: clean: every order charged exactly once, nothing lost, nothing left\n";
    if (!o.keep)
      fs::remove_all(dir);
    return 0;
  }
  std::cout << "\nRESULT: VIOLATIONS\n";
  for (const std::string& s : v)
    std::cout << "  - " << s << "\n";
  if (plan[0].done != o.kills || plan[1].done != o.kills)
    std::cout << "  - not every planned kill happened\n";
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
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "billing-demo: " << e.what() << '\n';
    return 2;
  }
}
