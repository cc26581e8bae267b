#pragma once
// exactly-bench's measurement: a scenario's slots in threads of their own, a warm-up, then the
// measured time, with each process's CPU and peak memory.

#include "bench_types.hpp"
#include "process_stats.hpp"
#include "server_storage.hpp"
#include "step_clock.hpp"

#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace exactly::bench {

// Runs `op(slot)` in `concurrency` threads for the warm-up, then measures for `seconds`; the
// server figures add up the processes of `servers`. `wal`, when given, reads PostgreSQL's count
// of WAL syncs and their milliseconds so far (nullopt: not read), for the measured time's;
// `storage`, the servers' storage sums so far (server_storage.hpp; nullopt: not read).
template <class Op>
figures measure(const std::string& name, int concurrency, const settings& s,
                const std::vector<pid_t>& servers, Op op,
                const std::function<std::optional<wal_syncs>()>& wal = {},
                const std::function<std::optional<storage_sums>()>& storage = {}) {
  std::atomic<int> phase{0};  // 0 warm-up, 1 measuring, 2 stop
  std::vector<std::vector<double>> lat(concurrency);
  std::vector<long> errors(concurrency, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < concurrency; ++i) {
    threads.emplace_back([&, i] {
      auto slot = op.make_slot(i);
      for (int p; (p = phase.load(std::memory_order_relaxed)) < 2;) {
        const auto t = clock_type::now();
        const bool ok = op(slot);
        if (p == 1) {
          lat[i].push_back(
              std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
          errors[i] += ok ? 0 : 1;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(s.warmup));
  const auto server_cpu_seconds = [&] {
    double sum = 0;
    for (pid_t p : servers)
      sum += bench::cpu_seconds(p);
    return sum;
  };
  for (pid_t p : servers)
    bench::reset_peak_rss(p);
  bench::reset_peak_rss(getpid());
  // Scraped ahead of the CPU readings, so the scrapes' CPU is not the scenario's.
  const std::optional<storage_sums> storage0 = storage ? storage() : std::nullopt;
  const double server_cpu0 = server_cpu_seconds(), client_cpu0 = bench::cpu_seconds(getpid());
  const std::optional<wal_syncs> wal0 = wal ? wal() : std::nullopt;
  const auto t0 = clock_type::now();
  phase = 1;
  if constexpr (requires { op.steps; }) {
    for (const auto& c : op.steps)
      c->on = true;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(s.seconds));
  phase = 2;
  if constexpr (requires { op.steps; }) {
    for (const auto& c : op.steps)
      c->on = false;
  }
  const double elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
  const std::optional<wal_syncs> wal1 = wal ? wal() : std::nullopt;
  const double server_cpu = server_cpu_seconds() - server_cpu0;
  const double client_cpu = bench::cpu_seconds(getpid()) - client_cpu0;
  const std::optional<storage_sums> storage1 = storage ? storage() : std::nullopt;
  for (auto& t : threads)
    t.join();
  figures f{.scenario = name, .concurrency = concurrency};
  std::vector<double> all;
  for (int i = 0; i < concurrency; ++i) {
    all.insert(all.end(), lat[i].begin(), lat[i].end());
    f.errors += errors[i];
    const long slot_ops = static_cast<long>(lat[i].size());
    f.fewest_slot_ops = i == 0 ? slot_ops : std::min(f.fewest_slot_ops, slot_ops);
  }
  std::sort(all.begin(), all.end());
  f.ops = static_cast<long>(all.size());
  f.ops_per_s = static_cast<double>(f.ops) / elapsed;
  f.p50_ms = percentile(all, 0.5);
  f.p99_ms = percentile(all, 0.99);
  f.p999_ms = percentile(all, 0.999);
  if (f.ops > 0) {
    f.server_cpu_per_op_ms = 1000 * server_cpu / static_cast<double>(f.ops);
    f.client_cpu_per_op_ms = 1000 * client_cpu / static_cast<double>(f.ops);
  }
  for (pid_t p : servers)
    f.server_peak_rss_kib += bench::peak_rss_kib(p);
  f.client_peak_rss_kib = bench::peak_rss_kib(getpid());
  if constexpr (requires { op.steps; }) {
    for (const auto& c : op.steps)
      f.steps.push_back(c->figures());
  }
  if (storage0 && storage1) {
    for (step_figures& kind : storage_steps(*storage0, *storage1))
      f.steps.push_back(std::move(kind));
  }
  if (wal0 && wal1)
    f.wal = wal_syncs{wal1->syncs - wal0->syncs, wal1->ms - wal0->ms};
  return f;
}

}  // namespace exactly::bench
