// exactly-bench --long-run (bench_long_run.hpp): N wire cycles against one bench-server, sampling
// memory and disk as they go.
#include "bench_long_run.hpp"

#include "bench_http_load.hpp"
#include "bench_server_process.hpp"
#include "process_stats.hpp"

#include <echo_server.hpp>

#include <exactly/common/sqlite.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

namespace exactly::bench {

using nlohmann::json;

namespace {

std::int64_t file_bytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

}  // namespace

json long_run(long n, int concurrency, double every, double rate, const settings& s) {
  test::temp_dir dir;
  server_process server(
      dir.path(), s,
      {"--acceptance-window-seconds", "2", "--sweep-seconds", "1", "--bounded-writes"});
  const http_op op{{server.port()}, 2};
  std::atomic<long> started{0}, finished{0}, errors{0};
  std::vector<std::thread> threads;
  const auto t0 = clock_type::now();
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&] {
      auto c = op.make_slot(0);
      for (long k; (k = started.fetch_add(1)) < n;) {
        if (rate > 0) {
          std::this_thread::sleep_until(
              t0 + std::chrono::duration_cast<clock_type::duration>(
                       std::chrono::duration<double>(static_cast<double>(k) / rate)));
        }
        if (!op(c))
          ++errors;
        ++finished;
      }
    });
  }
  json samples = json::array();
  const fs::path db = dir.path() / "server.db";
  // The server's rows, counted through a reader of the same file (WAL: it never blocks a write).
  sqlite::connection rows(db.string(), {.busy_timeout = std::chrono::milliseconds(1000)});
  std::printf("%8s %10s %12s %12s %14s %14s %12s\n", "seconds", "cycles", "server KiB",
              "client KiB", "server db B", "server WAL B", "server rows");
  for (bool last = false; !last;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(every));
    last = finished.load() >= n;
    json sample = {{"seconds", std::chrono::duration<double>(clock_type::now() - t0).count()},
                   {"cycles", finished.load()},
                   {"server_rss_kib", bench::rss_kib(server.pid())},
                   {"client_rss_kib", bench::rss_kib(getpid())},
                   {"server_db_file_bytes", file_bytes(db)},
                   {"server_wal_bytes", file_bytes(db.string() + "-wal")},
                   {"server_rows",
                    rows.query_int64("SELECT count(*) FROM exactly_interactions").value_or(-1)}};
    sample["server_db_bytes"] = sample["server_db_file_bytes"].get<std::int64_t>() +
                                sample["server_wal_bytes"].get<std::int64_t>();
    std::printf("%8.0f %10ld %12lld %12lld %14lld %14lld %12lld\n", sample["seconds"].get<double>(),
                sample["cycles"].get<long>(),
                static_cast<long long>(sample["server_rss_kib"].get<std::int64_t>()),
                static_cast<long long>(sample["client_rss_kib"].get<std::int64_t>()),
                static_cast<long long>(sample["server_db_file_bytes"].get<std::int64_t>()),
                static_cast<long long>(sample["server_wal_bytes"].get<std::int64_t>()),
                static_cast<long long>(sample["server_rows"].get<std::int64_t>()));
    std::fflush(stdout);
    samples.push_back(sample);
  }
  for (auto& t : threads)
    t.join();
  json out = {{"cycles", n}, {"rate", rate}, {"errors", errors.load()}, {"samples", samples}};
  std::printf("%ld cycles, %ld errors\n", n, errors.load());
  const std::size_t tenth = std::max<std::size_t>(1, samples.size() / 10);
  for (const char* key : {"server_rss_kib", "client_rss_kib", "server_db_bytes", "server_rows"}) {
    double first = 0, last = 0;
    for (std::size_t i = 0; i < tenth; ++i) {
      first += samples[i][key].get<double>();
      last += samples[samples.size() - 1 - i][key].get<double>();
    }
    const double growth = first > 0 ? last / first - 1 : 0;
    out["growth"][key] = growth;
    std::printf("%s: first tenth %.0f, last tenth %.0f, growth %+.1f %% (target within 10 %%)\n",
                key, first / static_cast<double>(tenth), last / static_cast<double>(tenth),
                100 * growth);
  }
  return out;
}

}  // namespace exactly::bench
