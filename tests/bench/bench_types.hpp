#pragma once
// exactly-bench's shared pieces: what a run is set to, what one scenario measured (and its
// JSON), and the request every scenario makes.

#include <exactly/common/sqlite.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace exactly::bench {

using clock_type = std::chrono::steady_clock;

// bench-server's principals (--principals): 0 is "bench", with API key "bench-key"; N > 0 is
// "bench-N", with "bench-key-N".
inline std::string bench_principal(int owner) {
  return owner == 0 ? std::string("bench") : "bench-" + std::to_string(owner);
}
inline std::string bench_api_key(int owner) {
  return owner == 0 ? std::string("bench-key") : "bench-key-" + std::to_string(owner);
}

// A request's headers as principal `owner` of bench-server.
inline std::vector<std::pair<std::string, std::string>> auth_as(int owner) {
  return {{"Authorization", "Bearer " + bench_api_key(owner)},
          {"Content-Type", "application/json"}};
}
inline const std::string body = R"({"customer_id":"c-1","amount_cents":1250})";

struct settings {
  double seconds = 5, warmup = 1;
  bool relaxed = false, ungrouped = false, reads_together = false, no_background_sync = false;
  int e2e_workers = 1;          // runtime worker threads carrying the e2e invocations
  int e2e_batch = 64;           // messages or steps a worker commits together
  int e2e_publishers = -1;      // e2e's runtime publisher threads; -1: as many as the dispatchers
  bool put_in_handler = false;  // e2e handlers wait for their PUTs (put_wait::in_handler)
  bool put_never = false;       // e2e commits with its PUTs under way (put_wait::never)
  long fsync_delay_us = 0;      // a slow disk on both sides (slow_sync_vfs.hpp)
  std::string postgres;         // the server stores in this PostgreSQL schema; "" = SQLite
  std::string client_postgres;  // the e2e client's PostgreSQL schema; "" = SQLite
  int instances = 1;            // server processes sharing the database (PostgreSQL only)
  int connections = 1;          // PostgreSQL connections of each server process
  bool unflushed_lane = false;  // the last one takes the PUTs and DELETEs that may go unflushed
  // SQLite's WAL size, server and e2e client (with_wal_pages; at the default, the defaults).
  int wal_pages = sqlite::options{}.checkpoint_pages;
};

// PostgreSQL's count of WAL syncs and the milliseconds they took (pg_stat_wal).
struct wal_syncs {
  long syncs;
  double ms;
};

// The mean milliseconds of a scenario's phases (step_clock): a wire cycle's or a client's
// requests, or an outbox dispatcher batch's steps, with its mean messages (`items`); or of the
// servers' storage (server_storage.hpp), with the mean requests a group.
struct step_figures {
  std::string key, label, items_key;  // the JSON's names for them and the items, the table's
  std::vector<std::pair<std::string, double>> ms;
  double items = 0;                     // 0: none counted
  std::string items_name = "messages";  // what the items are, in the table
  // When `counts_key` is set: how many of each phase the measured time held, shown per operation
  // (the JSON's `counts_key`).
  std::string counts_key{};
  std::vector<std::pair<std::string, std::int64_t>> counts{};
  // Each phase's count per operation over `ops`; empty without counts_key or operations.
  std::vector<std::pair<std::string, double>> counts_per_op(long ops) const {
    std::vector<std::pair<std::string, double>> out;
    if (counts_key.empty() || ops <= 0)
      return out;
    for (const auto& [name, n] : counts)
      out.emplace_back(name, static_cast<double>(n) / static_cast<double>(ops));
    return out;
  }
};

struct figures {
  std::string scenario;
  int concurrency = 0;
  double ops_per_s = 0, p50_ms = 0, p99_ms = 0, p999_ms = 0;
  long ops = 0, errors = 0;
  long fewest_slot_ops = 0;  // the ops of the client that completed the fewest: 0 = one stalled
  double server_cpu_per_op_ms = 0, client_cpu_per_op_ms = 0;
  std::int64_t server_peak_rss_kib = 0, client_peak_rss_kib = 0;
  std::vector<step_figures> steps{};  // wire's or the client's requests, dispatchers' batches
  // PostgreSQL's WAL syncs in the measured time (the whole cluster's: the servers', the e2e
  // client's, PostgreSQL's own), and the milliseconds they took; nullopt: not read.
  std::optional<wal_syncs> wal{};
};

// The value at fraction `p` of `sorted` (0 when it is empty).
inline double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty())
    return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(sorted.size() * p))];
}

// One scenario's figures as exactly-bench writes them.
inline nlohmann::json to_json(const figures& f) {
  nlohmann::json out = {
      {"scenario", f.scenario},
      {"concurrency", f.concurrency},
      {"ops_per_s", f.ops_per_s},
      {"ops", f.ops},
      {"errors", f.errors},
      {"fewest_slot_ops", f.fewest_slot_ops},
      {"p50_ms", f.p50_ms},
      {"p99_ms", f.p99_ms},
      {"p999_ms", f.p999_ms},
      {"server_cpu_ms_per_op", f.server_cpu_per_op_ms},
      {"client_cpu_ms_per_op", f.client_cpu_per_op_ms},
      {"server_peak_rss_kib", f.server_peak_rss_kib},
      {"client_peak_rss_kib", f.client_peak_rss_kib},
      {"postgres_wal_syncs", f.wal ? nlohmann::json(f.wal->syncs) : nlohmann::json()},
      {"postgres_wal_sync_ms", f.wal ? nlohmann::json(f.wal->ms) : nlohmann::json()}};
  for (const step_figures& phases : f.steps) {
    if (phases.ms.empty())
      continue;
    nlohmann::json steps = nlohmann::json::object();
    for (const auto& [name, ms] : phases.ms)
      steps[name] = ms;
    out[phases.key] = steps;
    if (phases.items > 0 && !phases.items_key.empty())
      out[phases.items_key] = phases.items;
    if (const auto per_op = phases.counts_per_op(f.ops); !per_op.empty()) {
      nlohmann::json counts = nlohmann::json::object();
      for (const auto& [name, n] : per_op)
        counts[name] = n;
      out[phases.counts_key] = counts;
    }
  }
  return out;
}

}  // namespace exactly::bench
