// exactly-bench: one business write made several ways on loopback, in one run, each scenario for a
// fixed time after a warm-up, at each concurrency, against a fresh bench-server process:
//   plain                   POST, no deduplication (the floor)
//   idempotency-key         POST with an Idempotency-Key, response stored in the same transaction
//   wire                    PUT, POST, GET, DELETE against the connector by a lean load generator
//   e2e                     the client runtime: handler, invoke_http, follow-up, DELETE (both
//                           sides durable)
//   outbox-idempotency-key  what one builds without the protocol, on the same runtime, queue and
//                           settings as e2e: the handler queues an outbox message in its
//                           transaction; outbox dispatchers (one per e2e worker) POST the due
//                           messages of a batch all at once after commit, with the message id as
//                           Idempotency-Key (retried with backoff on no answer or 5xx), then in
//                           one transaction record the answers and do the follow-ups' writes
//   outbox-three-exchanges  the same baseline making the protocol's two more exchanges per
//                           message, at no cost to the server: a GET answered 404 without a
//                           write before the batch's POSTs, and another sent with the next
//                           batch's POSTs, as the runtime sends a DELETE with them: what those
//                           exchanges alone cost the baseline. Where the cores are the limit (64
//                           clients), a ceiling for e2e, which makes them with writes and more
//                           commits besides; not necessarily at 1 client, where the dispatcher's
//                           polling adds latency that the runtime's publisher does not have
//   idempotency-key-four-exchanges
//                           the idempotency-key POST inside a wire cycle's other exchanges made
//                           to the connector route so that they write nothing: a PUT of an id
//                           the slot staged before (200), a GET of an id never staged (404), a
//                           DELETE of an id the slot deleted before (204): the cycle where only
//                           the POST writes
//   outbox-wire             the outbox baseline publishing the protocol's exchanges instead of
//                           its POST: a PUT of the body to the connector route, the POST, and
//                           the DELETE sent with the next batch's POSTs, under an id the handler
//                           chose: the e2e cycle at the baseline's client cost
//   wire-uncounted          (SQLite, only when --scenarios names it) wire against a server
//                           whose row counters' triggers were dropped: what wire would be if the
//                           connector kept its counters at no cost
// Prints a table and writes JSON: ops/s, p50/p99/p99.9, CPU seconds per op and peak RSS per
// process, and the ratios wire/idempotency-key, e2e/idempotency-key,
// outbox-idempotency-key/idempotency-key, e2e/outbox-idempotency-key, e2e/wire, the ceilings
// outbox-three-exchanges/outbox-idempotency-key and outbox-three-exchanges/wire, and
// idempotency-key-four-exchanges/idempotency-key, outbox-wire/wire, e2e/outbox-wire and
// outbox-wire/outbox-idempotency-key (what the protocol's exchanges cost a hand-built outbox), and
// with wire-uncounted, wire-uncounted/idempotency-key and wire/wire-uncounted (the median of
// --rounds). Under wire's row the mean time of each request; under e2e's and the outbox
// scenarios', of each request the client made (by method, as its transport timed it), and for
// the outbox ones of each phase of their dispatchers' batches, and their messages.
// --long-run N instead runs N wire cycles and samples RSS and database sizes (bench_long_run.hpp).
// Figures only; no assertions.
#include "bench_e2e_driver.hpp"
#include "bench_http_load.hpp"
#include "bench_long_run.hpp"
#include "bench_measure.hpp"
#include "bench_server_process.hpp"
#include "interrupt.hpp"
#include "latency_proxy.hpp"
#include "slow_fsync.hpp"
#include "slow_sync_vfs.hpp"

#include <echo_server.hpp>
#include <pg_cluster.hpp>

#include <exactly/common/postgres.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>

using namespace exactly;
using namespace exactly::bench;
using nlohmann::json;

namespace {

// Sets each NAME=VALUE of `settings` on the cluster (ALTER SYSTEM, then a reload). Throws
// std::invalid_argument for a malformed one, a name PostgreSQL does not know, or one that would
// take a restart.
void apply_settings(const test::pg_cluster& cluster, const std::vector<std::string>& settings) {
  pg::connection db({.conninfo = cluster.conninfo()});
  std::vector<std::string> names;
  for (const std::string& setting : settings) {
    const auto eq = setting.find('=');
    const std::string name = setting.substr(0, eq);
    if (eq == std::string::npos ||
        !db.query_int64("SELECT count(*) FROM pg_settings WHERE name = $1", name).value_or(0)) {
      throw std::invalid_argument("--postgres-setting " + setting +
                                  ": not NAME=VALUE of a known setting");
    }
    // PostgreSQL quotes the name and the value (format's %I and %L).
    db.execute(db.query("SELECT format('ALTER SYSTEM SET %I = %L', $1::text, $2::text)", name,
                        setting.substr(eq + 1))
                   .text(0, 0));
    names.push_back(name);
  }
  db.query("SELECT pg_reload_conf()");
  db.query("SELECT pg_sleep(0.2)");  // the postmaster's children read the file again
  for (const std::string& name : names) {
    if (db.query_int64("SELECT count(*) FROM pg_settings WHERE name = $1 AND pending_restart", name)
            .value_or(0)) {
      throw std::invalid_argument("--postgres-setting: " + name + " needs a restart");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "exactly-bench: plain, idempotency-key, wire, e2e, the outbox baselines and the protocol's "
      "exchanges at a baseline's cost, on loopback, in one run"};
  settings s;
  std::vector<int> concurrency = {1, 64};
  // Every scenario but wire-uncounted (SQLite's only), which runs when named.
  std::vector<std::string> scenarios = {"plain",
                                        "idempotency-key",
                                        "wire",
                                        "e2e",
                                        "outbox-idempotency-key",
                                        "outbox-three-exchanges",
                                        "idempotency-key-four-exchanges",
                                        "outbox-wire"};
  std::vector<std::string> known = scenarios;
  known.push_back("wire-uncounted");
  std::string json_path = "bench-results.json";
  long long_run_cycles = 0;
  double sample_seconds = 10;
  int rounds = 1;
  app.add_option("--seconds", s.seconds, "measured time of each scenario");
  std::string engine = "sqlite";
  app.add_option("--engine", engine,
                 "storage of the server and of the e2e client: sqlite, or postgres (a throwaway "
                 "cluster started here, a schema for each)");
  app.add_option("--server-instances", s.instances,
                 "server processes sharing the PostgreSQL database; clients spread over them")
      ->check(CLI::Range(1, 8));
  app.add_option("--server-connections", s.connections,
                 "PostgreSQL connections of each server process, one storage thread each")
      ->check(CLI::Range(1, 16));
  app.add_flag("--server-unflushed-lane", s.unflushed_lane,
               "with --server-connections 2 or more: the last connection of each server takes "
               "only the PUTs and DELETEs that may commit unflushed");
  app.add_option("--warmup", s.warmup, "unmeasured time before each scenario");
  app.add_option("--concurrency", concurrency, "concurrent clients, one run per value")
      ->delimiter(',');
  app.add_option("--scenarios", scenarios,
                 "which of plain, idempotency-key, wire, e2e, outbox-idempotency-key, "
                 "outbox-three-exchanges, idempotency-key-four-exchanges, outbox-wire (the "
                 "default: all of these), wire-uncounted (SQLite)")
      ->delimiter(',')
      ->check(CLI::IsMember(known));
  app.add_option("--json", json_path, "where to write the figures");
  app.add_flag("--synchronous-normal", s.relaxed, "opt out of synchronous=FULL everywhere");
  app.add_flag("--no-group-commit", s.ungrouped, "one COMMIT per request on the server");
  app.add_flag("--no-background-sync", s.no_background_sync,
               "the server's storage thread waits for each flushed group's fsync");
  app.add_flag("--no-separate-reads", s.reads_together,
               "server GETs on the storage thread, in commit groups");
  app.add_option("--e2e-workers", s.e2e_workers,
                 "client runtime worker threads for e2e and the outbox scenarios (at most the "
                 "concurrency)");
  app.add_option("--e2e-publishers", s.e2e_publishers,
                 "e2e: runtime threads that only publish beside the handler workers (0: the "
                 "workers publish too; default: as many as the outbox baseline's dispatchers)");
  app.add_option("--e2e-batch", s.e2e_batch,
                 "client runtime batch (e2e and the outbox scenarios): steps sharing one commit");
  app.add_flag(
      "--e2e-put-in-handler", s.put_in_handler,
      "e2e handlers wait for their PUT's answer, one after another (put_wait::in_handler)");
  app.add_flag("--e2e-put-never", s.put_never,
               "e2e batches commit with their PUTs under way, and POST at once (put_wait::never)")
      ->excludes("--e2e-put-in-handler");
  app.add_option("--fsync-delay-us", s.fsync_delay_us,
                 "a slow disk: every SQLite fsync of the server and the client takes this much "
                 "longer, and with --engine postgres every fsync of PostgreSQL's server")
      ->check(CLI::NonNegativeNumber);
  const CLI::Option* wal_pages =
      app.add_option(
             "--wal-pages", s.wal_pages,
             "SQLite: the WAL of the server's and the e2e client's databases is checkpointed "
             "from this many pages (sqlite::with_wal_pages; default: the library's, 4000)")
          ->check(CLI::Range(100, 1 << 20));
  long postgres_delay_us = 0;
  app.add_option("--postgres-delay-us", postgres_delay_us,
                 "PostgreSQL a network away: every byte to and from it takes this much longer "
                 "each way (a proxy on loopback)")
      ->check(CLI::NonNegativeNumber);
  long http_delay_us = 0;
  app.add_option("--http-delay-us", http_delay_us,
                 "e2e and the outbox scenarios: their client a network away from the server, "
                 "every byte each way this much later (a proxy on loopback; the other "
                 "scenarios are not delayed)")
      ->check(CLI::NonNegativeNumber);
  std::vector<std::string> postgres_settings;
  app.add_option("--postgres-setting", postgres_settings,
                 "with --engine postgres: NAME=VALUE set on the cluster before the run (ALTER "
                 "SYSTEM and a reload), e.g. autovacuum_naptime=10s");
  app.add_option("--rounds", rounds,
                 "run every scenario this many times, interleaved; ratios are the median round's")
      ->check(CLI::PositiveNumber);
  app.add_option("--long-run", long_run_cycles, "instead: N wire cycles, sampling memory/disk");
  double long_run_rate = 0;
  app.add_option("--long-run-rate", long_run_rate,
                 "long run: start at most this many cycles per second (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sample-seconds", sample_seconds, "long run: sampling period");
  int long_run_owners = 1;
  app.add_option("--long-run-owners", long_run_owners,
                 "long run: the clients stage as this many principals, in turn")
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);
  if (s.fsync_delay_us > 0)
    bench::install_slow_sync_vfs(std::chrono::microseconds(s.fsync_delay_us));
  if (engine != "sqlite" && engine != "postgres") {
    std::fprintf(stderr, "--engine must be sqlite or postgres\n");
    return 2;
  }
  if (engine == "postgres" &&
      std::find(scenarios.begin(), scenarios.end(), "wire-uncounted") != scenarios.end()) {
    std::fprintf(stderr, "wire-uncounted is SQLite's (PostgreSQL's server counts inline)\n");
    return 2;
  }
  if (wal_pages->count() > 0 && engine == "postgres") {
    std::fprintf(stderr, "--wal-pages is SQLite's (with --engine postgres no SQLite is used)\n");
    return 2;
  }
  if (s.unflushed_lane && s.connections < 2) {
    std::fprintf(stderr, "--server-unflushed-lane needs --server-connections 2 or more\n");
    return 2;
  }
  if ((s.instances > 1 || s.connections > 1) && engine != "postgres") {
    std::fprintf(stderr,
                 "--server-instances and --server-connections above 1 need --engine postgres\n");
    return 2;
  }
  // PostgreSQL: a throwaway cluster for the run (fsync=on, synchronous_commit=on), a fresh schema
  // per scenario.
  // From here on a signal stops the run where it checks, and the destructors on the way out
  // stop the server processes and the cluster.
  note_interrupts();
  std::optional<test::pg_cluster> cluster;
  if (engine == "postgres") {
    cluster.emplace();
    std::printf("a throwaway PostgreSQL cluster in %s\n", cluster->dir().c_str());
  }
  // A long run reads autovacuum's passes from the cluster's log, unless told otherwise.
  if (cluster && long_run_cycles > 0 &&
      std::none_of(postgres_settings.begin(), postgres_settings.end(), [](const std::string& set) {
        return set.starts_with("log_autovacuum_min_duration=");
      })) {
    postgres_settings.push_back("log_autovacuum_min_duration=0");
  }
  // A slow disk under PostgreSQL: its server restarted with every fsync slowed, and its WAL syncs
  // timed by PostgreSQL itself, which the run reports at its end.
  if (cluster && s.fsync_delay_us > 0) {
    cluster->restart_with_environment(slow_fsync_environment(s.fsync_delay_us));
    if (!slow_fsync_loaded(*cluster)) {  // else a run on a fast disk, called slow
      std::fprintf(stderr, "--fsync-delay-us: %s is not loaded in PostgreSQL's server (see %s)\n",
                   EXACTLY_SLOW_FSYNC_PRELOAD, cluster->log_path().c_str());
      return 2;
    }
    postgres_settings.push_back("track_wal_io_timing=on");
  }
  if (!postgres_settings.empty()) {
    if (!cluster) {
      std::fprintf(stderr, "--postgres-setting needs --engine postgres\n");
      return 2;
    }
    try {
      apply_settings(*cluster, postgres_settings);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 2;
    }
  }
  if (http_delay_us > 0 && long_run_cycles > 0) {
    std::fprintf(stderr, "--http-delay-us delays no --long-run\n");
    return 2;
  }
  std::optional<bench::latency_proxy> network;
  if (postgres_delay_us > 0) {
    if (!cluster || long_run_cycles > 0) {
      std::fprintf(stderr, "--postgres-delay-us needs --engine postgres, and no --long-run\n");
      return 2;
    }
    network.emplace(cluster->port(), std::chrono::microseconds(postgres_delay_us));
  }
  // A fresh schema of the cluster, through the proxy if there is one.
  const auto fresh_schema = [&] {
    const std::string c = cluster->fresh_schema();
    return network ? network->route(c) : c;
  };

  json out = {{"machine", {{"cores", std::thread::hardware_concurrency()}}},
              {"synchronous", s.relaxed ? "NORMAL" : "FULL"},
              {"group_commit", !s.ungrouped},
              {"background_sync", !s.no_background_sync},
              {"separate_reads", !s.reads_together},
              {"e2e_workers", s.e2e_workers},
              {"e2e_batch", s.e2e_batch},
              {"e2e_publishers", s.e2e_publishers},
              {"e2e_put_wait", s.put_in_handler ? "in_handler"
                               : s.put_never    ? "never"
                                                : "before_commit"},
              {"fsync_delay_us", s.fsync_delay_us},
              {"wal_pages", engine == "postgres" ? json() : json(s.wal_pages)},
              {"postgres_delay_us", postgres_delay_us},
              {"http_delay_us", http_delay_us},
              {"postgres_settings", postgres_settings},
              {"engine", engine},
              {"server_instances", s.instances},
              {"server_connections", s.connections},
              {"server_unflushed_lane", s.unflushed_lane}};
  if (wal_pages->count() > 0)
    std::printf("SQLite's WAL checkpointed from %d pages (--wal-pages)\n", s.wal_pages);
  if (long_run_cycles > 0) {
    if (cluster)
      s.postgres = fresh_schema();
    // Caught here, so that the server and the cluster are stopped on the way out.
    try {
      out["long_run"] = long_run(long_run_cycles, concurrency.back(), sample_seconds, long_run_rate,
                                 long_run_owners, s, cluster ? cluster->log_path() : "");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "exactly-bench --long-run: %s\n", e.what());
      return interrupted() ? interrupted_status() : 1;
    }
    std::ofstream(json_path) << out.dump(2) << '\n';
    std::printf("figures written to %s\n", json_path.c_str());
    return 0;
  }
  std::printf(
      "server engine %s (%d instance%s, %d connection%s each), synchronous=%s on every database,"
      " group commit %s, background sync %s, %u cores; %g s warm-up, %g s measured per scenario\n",
      engine.c_str(), s.instances, s.instances > 1 ? "s" : "", s.connections,
      s.connections > 1 ? "s" : "", s.relaxed ? "NORMAL" : "FULL", s.ungrouped ? "off" : "on",
      s.no_background_sync ? "off" : "on", std::thread::hardware_concurrency(), s.warmup,
      s.seconds);
  if (s.fsync_delay_us > 0)
    std::printf("every fsync of server and client takes %ld us longer (--fsync-delay-us%s)\n",
                s.fsync_delay_us, cluster ? ", PostgreSQL's server included" : "");
  if (cluster && s.fsync_delay_us > 0)
    pg::connection({.conninfo = cluster->conninfo()}).query("SELECT pg_stat_reset_shared('wal')");
  if (postgres_delay_us > 0)
    std::printf(
        "every byte to and from PostgreSQL takes %ld us longer each way (--postgres-delay-us)\n",
        postgres_delay_us);
  if (http_delay_us > 0)
    std::printf(
        "every byte between the e2e and outbox clients and the server takes %ld us longer "
        "each way (--http-delay-us)\n",
        http_delay_us);
  std::printf("%-30s %5s %9s %8s %8s %8s %6s %10s %10s %10s %10s\n", "scenario", "conc", "ops/s",
              "p50 ms", "p99 ms", "p99.9 ms", "errors", "srv cpu/op", "cli cpu/op", "srv peak",
              "cli peak");
  const auto stopped_by_signal = [] {
    std::fprintf(stderr, "exactly-bench: stopped by a signal; no figures written\n");
    return interrupted_status();
  };
  std::vector<figures> all;
  std::vector<int> round_of;  // all[i] was measured in round round_of[i]
  // PostgreSQL's WAL syncs so far, read around each scenario's measured time.
  std::optional<pg::connection> stats;
  std::function<std::optional<wal_syncs>()> wal;
  if (cluster) {
    stats.emplace(pg::options{.conninfo = cluster->conninfo()});
    wal = [&stats]() -> std::optional<wal_syncs> {
      try {
        return read_wal_syncs(*stats);
      } catch (const std::exception& e) {  // the scenario's other figures still count
        std::fprintf(stderr, "exactly-bench: pg_stat_wal not read: %s\n", e.what());
        return std::nullopt;
      }
    };
  }
  for (int round = 0; round < rounds; ++round) {
    for (int c : concurrency) {
      for (const std::string& name : scenarios) {
        if (interrupted())  // between two scenarios: nothing of the run is written
          return stopped_by_signal();
        test::temp_dir dir;
        if (cluster) {
          s.postgres = fresh_schema();
          s.client_postgres = fresh_schema();
        }
        std::vector<std::unique_ptr<server_process>> servers;
        std::vector<pid_t> pids;
        std::vector<std::uint16_t> ports;
        for (int i = 0; i < s.instances; ++i) {
          servers.push_back(std::make_unique<server_process>(
              dir.path(), s,
              name == "wire-uncounted" ? std::vector<std::string>{"--drop-counter-triggers"}
                                       : std::vector<std::string>{}));
          pids.push_back(servers.back()->pid());
          ports.push_back(servers.back()->port());
        }
        const auto storage = [&ports]() -> std::optional<storage_sums> {
          try {
            return read_storage_sums(ports);
          } catch (const std::exception& e) {  // the scenario's other figures still count
            std::fprintf(stderr, "exactly-bench: the servers' /metrics not read: %s\n", e.what());
            return std::nullopt;
          }
        };
        figures f;
        if (name == "e2e" || name.starts_with("outbox-")) {
          std::optional<bench::latency_proxy> http_network;  // the client a network away
          if (http_delay_us > 0)
            http_network.emplace(ports[0], std::chrono::microseconds(http_delay_us));
          e2e_driver driver(dir.path(), http_network ? http_network->port() : ports[0], c, s,
                            name == "e2e"                      ? e2e_way::invoke_http
                            : name == "outbox-idempotency-key" ? e2e_way::outbox_idempotency_key
                            : name == "outbox-wire"            ? e2e_way::outbox_wire
                                                               : e2e_way::outbox_three_exchanges);
          f = measure(name, c, s, pids, e2e_op{&driver}, wal, storage);
        } else {
          const int kind = name == "plain"                            ? 0
                           : name == "idempotency-key"                ? 1
                           : name == "idempotency-key-four-exchanges" ? 3
                                                                      : 2;
          f = measure(name, c, s, pids, http_op{ports, kind}, wal, storage);
        }
        std::printf("%-30s %5d %9.0f %8.2f %8.2f %8.2f %6ld %8.3fms %8.3fms %7lldMiB %7lldMiB\n",
                    name.c_str(), c, f.ops_per_s, f.p50_ms, f.p99_ms, f.p999_ms, f.errors,
                    f.server_cpu_per_op_ms, f.client_cpu_per_op_ms,
                    static_cast<long long>(f.server_peak_rss_kib / 1024),
                    static_cast<long long>(f.client_peak_rss_kib / 1024));
        for (const step_figures& phases : f.steps) {
          if (phases.ms.empty())
            continue;
          std::printf("%-30s", ("  " + phases.label + ":").c_str());
          for (const auto& [step, ms] : phases.ms)
            std::printf(" %s %.2f", step.c_str(), ms);
          if (phases.items > 0)
            std::printf(", %.1f %s", phases.items, phases.items_name.c_str());
          std::printf("\n");
          if (const auto per_op = phases.counts_per_op(f.ops); !per_op.empty()) {
            std::printf("%-30s", "  requests per operation:");  // more than one: sent again
            for (const auto& [step, n] : per_op)
              std::printf(" %s %.3f", step.c_str(), n);
            std::printf("\n");
          }
        }
        if (f.wal && f.wal->syncs > 0) {  // the operations a sync carried, and how busy
          std::printf("%-30s %ld, %.1f ops a sync", "  PostgreSQL's WAL syncs:", f.wal->syncs,
                      static_cast<double>(f.ops) / static_cast<double>(f.wal->syncs));
          if (f.wal->ms > 0)
            std::printf(", syncing %.0f %% of the time", f.wal->ms / (10 * s.seconds));
          std::printf("\n");
        }
        std::fflush(stdout);
        all.push_back(f);
        round_of.push_back(round);
        json row = to_json(f);
        row["round"] = round + 1;
        out["results"].push_back(row);
      }
    }
  }
  if (interrupted())  // during the last scenario
    return stopped_by_signal();
  // Each ratio divides figures of one round (the same minutes of a noisy machine); with several
  // rounds the median is reported, with the spread.
  for (int c : concurrency) {
    auto find = [&](const std::string& name, int round) -> const figures* {
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i].scenario == name && all[i].concurrency == c && round_of[i] == round)
          return &all[i];
      }
      return nullptr;
    };
    const std::pair<const char*, const char*> quotients[] = {
        {"wire", "idempotency-key"},
        {"e2e", "idempotency-key"},
        {"outbox-idempotency-key", "idempotency-key"},
        {"e2e", "outbox-idempotency-key"},
        {"e2e", "wire"},
        {"outbox-three-exchanges", "outbox-idempotency-key"},
        {"outbox-three-exchanges", "wire"},
        {"idempotency-key-four-exchanges", "idempotency-key"},
        {"outbox-wire", "wire"},
        {"e2e", "outbox-wire"},
        {"outbox-wire", "outbox-idempotency-key"},
        {"wire-uncounted", "idempotency-key"},
        {"wire", "wire-uncounted"}};
    for (const auto& [name, base] : quotients) {
      std::vector<double> ratios;
      for (int round = 0; round < rounds; ++round) {
        const figures* b = find(base, round);
        const figures* f = find(name, round);
        if (b && f && b->ops_per_s > 0)
          ratios.push_back(f->ops_per_s / b->ops_per_s);
      }
      if (ratios.empty())
        continue;
      const std::string key = std::string(name) + "/" + base;
      out["ratio_rounds"][key][std::to_string(c)] = ratios;
      std::sort(ratios.begin(), ratios.end());
      const double median = ratios[ratios.size() / 2];
      out["ratios"][key][std::to_string(c)] = median;
      std::printf("concurrency %d: %s = %.3f", c, key.c_str(), median);
      if (ratios.size() > 1)
        std::printf(" (median of %zu rounds, %.3f to %.3f)", ratios.size(), ratios.front(),
                    ratios.back());
      std::printf("\n");
    }
  }
  if (cluster && s.fsync_delay_us > 0) {  // the delay, as PostgreSQL timed its WAL syncs
    pg::connection db({.conninfo = cluster->conninfo()});
    const auto [syncs, ms] = read_wal_syncs(db);
    out["postgres_wal_syncs"] = syncs;
    out["postgres_wal_sync_mean_ms"] = syncs > 0 ? ms / static_cast<double>(syncs) : 0.0;
    std::printf("PostgreSQL's WAL syncs: %ld, %.2f ms each on average\n", syncs,
                out["postgres_wal_sync_mean_ms"].get<double>());
  }
  std::ofstream(json_path) << out.dump(2) << '\n';
  std::printf("figures written to %s\n", json_path.c_str());
  return 0;
}
