// metrics-bench: what a /metrics scrape costs with millions of rows stored, and whether scrapes
// slow the protocol down. Prints figures; asserts nothing.
//
//   metrics-bench [--rows 2000000] [--puts 3000] [--scrapers 16] [--postgres CONNINFO]
//
// Fills the store with tombstones, then measures: the full count a scrape used to run (the
// baseline, same run), scrape latency, and PUT latency with no scraper and with `--scrapers`
// threads scraping in a loop.
#include <echo_server.hpp>
#include <http_client.hpp>
#include <requests.hpp>

#include <exactly/common/request_id.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

using namespace exactly;
using namespace exactly::test;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// The q-quantile of `v` (sorted here).
double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

void fill(echo_server& s, std::int64_t rows) {
  const std::int64_t at = s.now_ms();
  s.http().run_on_storage([&] {
    database db = s.connector().storage();
    const std::string n = std::to_string(rows), t = std::to_string(at);
    if (db.kind() == engine::sqlite) {
      db.exec("BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
              n +
              ") INSERT INTO exactly_interactions(route, id, owner, id_ms, state,"
              " tombstone_reason, state_since_ms) SELECT '/fill/{id}', printf('%09d', i),"
              " 'filler', " +
              t + ", 3, 1, " + t + " FROM n; COMMIT;");
    } else {
      db.exec(
          "INSERT INTO exactly_interactions(route, id, owner, id_ms, state, tombstone_reason,"
          " state_since_ms) SELECT '/fill/{id}', lpad(i::text, 9, '0'), 'filler', " +
          t + ", 3, 1, " + t + " FROM generate_series(1, " + n + ") AS i");
    }
  });
}

// Milliseconds of the count by state a scrape ran before the counters (median of 5).
double full_count_ms(echo_server& s) {
  std::vector<double> v;
  for (int i = 0; i < 5; ++i) {
    s.http().run_on_storage([&] {
      const auto start = clock_type::now();
      s.connector().storage().query_int64(
          "SELECT sum(c) FROM (SELECT state, count(*) AS c FROM exactly_interactions"
          " GROUP BY state) AS by_state");
      v.push_back(ms_since(start));
    });
  }
  return quantile(v, 0.5);
}

// Latencies in ms of `n` PUTs of fresh ids.
std::vector<double> put_latencies(echo_server& s, int n) {
  http_client c(s.port());
  std::vector<double> v;
  v.reserve(n);
  for (int i = 0; i < n; ++i) {
    const std::string id = request_id::mint(s.now_ms()).to_string();
    const auto start = clock_type::now();
    const auto r = c.request("PUT", path_of(id), R"({"status":200,"reply":1})", alice);
    v.push_back(ms_since(start));
    if (r.status != 201) {
      std::fprintf(stderr, "PUT answered %u: %s\n", r.status, r.body.c_str());
      std::exit(1);
    }
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"metrics-bench: the cost of a /metrics scrape at scale"};
  std::int64_t rows = 2'000'000;
  int puts = 3000, scrapers = 16, scrapes = 200;
  std::string postgres;
  app.add_option("--rows", rows, "rows stored before measuring")->check(CLI::PositiveNumber);
  app.add_option("--puts", puts, "PUTs per latency measurement")->check(CLI::PositiveNumber);
  app.add_option("--scrapes", scrapes, "scrapes timed one after another")
      ->check(CLI::PositiveNumber);
  app.add_option("--scrapers", scrapers, "threads scraping in a loop during the second PUT run")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--postgres", postgres, "a PostgreSQL connection string (default: SQLite)");
  CLI11_PARSE(app, argc, argv);

  echo_server_config cfg;
  cfg.postgres = postgres;
  cfg.max_staged_per_principal = 1'000'000'000;
  echo_server s(cfg);

  auto start = clock_type::now();
  fill(s, rows);
  std::printf("engine %s, %lld rows stored in %.1f s\n", postgres.empty() ? "sqlite" : "postgres",
              static_cast<long long>(rows), ms_since(start) / 1000);
  std::printf("baseline: one count of all rows by state (what a scrape ran before): %.1f ms\n",
              full_count_ms(s));

  http_client scraper(s.port());
  std::vector<double> scrape_ms;
  for (int i = 0; i < scrapes; ++i) {
    start = clock_type::now();
    const auto r = scraper.request("GET", "/metrics");
    scrape_ms.push_back(ms_since(start));
    if (r.status != 200 ||
        r.body.find("exactly_interactions{state=\"tombstone\"}") == std::string::npos) {
      std::fprintf(stderr, "scrape answered %u\n", r.status);
      return 1;
    }
  }
  std::printf("scrape: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d scrapes)\n",
              quantile(scrape_ms, 0.5), quantile(scrape_ms, 0.99), quantile(scrape_ms, 1.0),
              scrapes);

  const auto quiet = put_latencies(s, puts);
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> scraped{0};
  std::vector<std::thread> loops;
  for (int i = 0; i < scrapers; ++i) {
    loops.emplace_back([&] {
      http_client c(s.port());
      while (!stop) {
        c.request("GET", "/metrics");
        ++scraped;
      }
    });
  }
  start = clock_type::now();
  const auto busy = put_latencies(s, puts);
  const double busy_s = ms_since(start) / 1000;
  stop = true;
  for (auto& t : loops)
    t.join();
  std::printf("PUT, no scraper:      p50 %.2f ms, p99 %.2f ms (%d PUTs)\n", quantile(quiet, 0.5),
              quantile(quiet, 0.99), puts);
  std::printf("PUT, %2d scrapers:     p50 %.2f ms, p99 %.2f ms (%.0f scrapes/s alongside)\n",
              scrapers, quantile(busy, 0.5), quantile(busy, 0.99),
              static_cast<double>(scraped.load()) / busy_s);
  std::printf("PUT p99 ratio, scrapers / none: %.2f\n",
              quantile(busy, 0.99) / std::max(quantile(quiet, 0.99), 1e-9));
  return 0;
}
