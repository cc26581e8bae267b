// metrics-bench: what a /metrics scrape costs with millions of rows stored, and whether scrapes
// slow the protocol down. Prints figures; asserts nothing.
//
//   metrics-bench [--rows 2000000] [--puts 3000] [--scrapers 16] [--interval-ms 0] [--rounds 3]
//                 [--max-age-ms 1000] [--postgres CONNINFO]
//
// Fills the store with tombstones, then measures: the full count a scrape used to run (the
// baseline, same run), scrape latency, and PUT latency alone, beside `--scrapers` threads
// requesting /healthz in a loop (what any request costs on the shared cores), and beside as many
// scraping /metrics, in rounds side by side.
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

struct loops_result {
  std::vector<double> put_ms;  // the PUTs' latencies
  double loop_rate = 0;        // the loops' requests a second
};

// PUT latencies while `loops` threads GET `target` in a loop, each waiting `interval_ms` between
// requests (0: none).
loops_result beside_loops(echo_server& s, int puts, int loops, const std::string& target,
                          int interval_ms) {
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> done{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < loops; ++i) {
    threads.emplace_back([&] {
      http_client c(s.port());
      while (!stop) {
        if (c.request("GET", target).status != 200) {
          std::fprintf(stderr, "GET %s failed\n", target.c_str());
          std::exit(1);
        }
        ++done;
        if (interval_ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
      }
    });
  }
  const auto start = clock_type::now();
  loops_result out{put_latencies(s, puts), 0};
  out.loop_rate = static_cast<double>(done.load()) / (ms_since(start) / 1000);
  stop = true;
  for (auto& t : threads)
    t.join();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"metrics-bench: the cost of a /metrics scrape at scale"};
  std::int64_t rows = 2'000'000;
  int puts = 3000, scrapers = 16, scrapes = 200, rounds = 3, interval_ms = 0, max_age_ms = 1000;
  std::string postgres;
  app.add_option("--rows", rows, "rows stored before measuring")->check(CLI::PositiveNumber);
  app.add_option("--puts", puts, "PUTs per latency measurement")->check(CLI::PositiveNumber);
  app.add_option("--scrapes", scrapes, "scrapes timed one after another")
      ->check(CLI::PositiveNumber);
  app.add_option("--scrapers", scrapers, "threads scraping (or requesting /healthz) in a loop")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--interval-ms", interval_ms, "each loop's pause between requests (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rounds", rounds, "rounds of the three PUT runs; medians are printed")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-age-ms", max_age_ms, "the server's metrics_max_age (0: every scrape reads)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--postgres", postgres, "a PostgreSQL connection string (default: SQLite)");
  CLI11_PARSE(app, argc, argv);

  echo_server_config cfg;
  cfg.postgres = postgres;
  cfg.max_staged_per_principal = 1'000'000'000;
  cfg.max_staged_bytes_per_principal = std::int64_t{1} << 40;
  cfg.metrics_max_age = std::chrono::milliseconds(max_age_ms);
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
  std::printf(
      "scrape over HTTP: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d scrapes, max age %d ms)\n",
      quantile(scrape_ms, 0.5), quantile(scrape_ms, 0.99), quantile(scrape_ms, 1.0), scrapes,
      max_age_ms);
  std::vector<double> read_ms;
  for (int i = 0; i < scrapes; ++i) {
    start = clock_type::now();
    if (s.metrics().empty())
      return 1;
    read_ms.push_back(ms_since(start));
  }
  std::printf(
      "scrape reading every figure now (on the storage thread): p50 %.2f ms, p99 %.2f ms,"
      " max %.2f ms\n",
      quantile(read_ms, 0.5), quantile(read_ms, 0.99), quantile(read_ms, 1.0));

  // Rounds of three PUT runs side by side: alone, beside loops requesting /healthz (the cost of
  // any request on the shared cores, the baseline) and beside loops scraping /metrics.
  std::vector<double> none_p99, health_p99, scrape_p99, none_p50, health_p50, scrape_p50;
  double scrape_rate = 0;
  for (int round = 0; round < rounds; ++round) {
    // The order of the three runs turns each round, so that what grows with the run (staged
    // rows) weighs on each alike.
    for (int k = 0; k < 3; ++k) {
      switch ((round + k) % 3) {
        case 0: {
          const auto quiet = put_latencies(s, puts);
          none_p50.push_back(quantile(quiet, 0.5));
          none_p99.push_back(quantile(quiet, 0.99));
          break;
        }
        case 1: {
          const auto health = beside_loops(s, puts, scrapers, "/healthz", interval_ms);
          health_p50.push_back(quantile(health.put_ms, 0.5));
          health_p99.push_back(quantile(health.put_ms, 0.99));
          break;
        }
        default: {
          const auto scrape = beside_loops(s, puts, scrapers, "/metrics", interval_ms);
          scrape_p50.push_back(quantile(scrape.put_ms, 0.5));
          scrape_p99.push_back(quantile(scrape.put_ms, 0.99));
          scrape_rate += scrape.loop_rate / rounds;
        }
      }
    }
    std::printf(
        "round %d: PUT p99 %.2f ms alone, %.2f ms beside /healthz, %.2f ms beside /metrics\n",
        round + 1, none_p99.back(), health_p99.back(), scrape_p99.back());
  }
  const char* pace = interval_ms > 0 ? "paced" : "tight";
  std::printf("PUT, alone:                 p50 %.2f ms, p99 %.2f ms (median of %d rounds of %d)\n",
              quantile(none_p50, 0.5), quantile(none_p99, 0.5), rounds, puts);
  std::printf("PUT, %2d %s /healthz loops: p50 %.2f ms, p99 %.2f ms\n", scrapers, pace,
              quantile(health_p50, 0.5), quantile(health_p99, 0.5));
  std::printf("PUT, %2d %s /metrics loops: p50 %.2f ms, p99 %.2f ms (%.0f scrapes/s alongside)\n",
              scrapers, pace, quantile(scrape_p50, 0.5), quantile(scrape_p99, 0.5), scrape_rate);
  std::printf("PUT p99 ratio, /metrics loops / alone: %.2f\n",
              quantile(scrape_p99, 0.5) / std::max(quantile(none_p99, 0.5), 1e-9));
  std::printf("PUT p99 ratio, /metrics loops / /healthz loops: %.2f\n",
              quantile(scrape_p99, 0.5) / std::max(quantile(health_p99, 0.5), 1e-9));
  return 0;
}
