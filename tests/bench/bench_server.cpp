// bench-server: the benchmark's server process: the plain, idempotency-key and connector routes
// of bench_routes.hpp on one http_server (API key "bench-key"), idempotency keys kept 60 s unless
// told otherwise. Prints "listening on HOST:PORT" once it accepts connections; serves until
// SIGINT/SIGTERM.

#include "bench_routes.hpp"
#include "bench_types.hpp"
#include "slow_sync_vfs.hpp"

#include <exactly/common/host_port.hpp>
#include <exactly/common/sqlite_wal_pages.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"bench-server: plain, idempotency-key and exactly-once routes on one server"};
  std::string listen = "127.0.0.1:0";
  std::string db = "bench-server.db";
  bool relaxed = false;
  bool ungrouped = false, no_background_sync = false;
  bool reads_together = false;
  app.add_option("--listen", listen, "HOST:PORT (port 0 picks a free one)");
  app.add_option("--db", db, "SQLite database file");
  std::string postgres;
  app.add_option("--postgres", postgres, "store in PostgreSQL instead (a libpq connection string)");
  std::size_t pg_connections = 1;
  app.add_option("--postgres-connections", pg_connections,
                 "PostgreSQL connections, one storage thread each (connector_options)")
      ->check(CLI::Range(1, 64));
  bool unflushed_lane = false;
  app.add_flag("--postgres-unflushed-lane", unflushed_lane,
               "the last connection takes the PUTs and DELETEs that may commit unflushed "
               "(connector_options::postgres_unflushed_lane)");
  app.add_flag("--synchronous-normal", relaxed, "opt out of synchronous=FULL");
  app.add_flag("--no-group-commit", ungrouped, "one COMMIT (and fsync) per request");
  app.add_flag("--no-background-sync", no_background_sync,
               "the storage thread waits for each flushed group's fsync (server_options)");
  app.add_flag("--no-separate-reads", reads_together,
               "GETs on the storage thread in commit groups (connector_options::separate_reads)");
  double window_s = 3600, sweep_s = 60;
  app.add_option("--acceptance-window-seconds", window_s,
                 "ids older than this are refused; tombstones are kept this long");
  app.add_option("--sweep-seconds", sweep_s, "sweeper period");
  exactly::bench::write_options writes;
  app.add_flag("--bounded-writes", writes.bounded,
               "overwrite one of 1024 business rows instead of adding one (long runs)");
  double key_window_s = 60;
  app.add_option("--idempotency-key-window-seconds", key_window_s,
                 "the idempotency-key route deletes keys older than this as it stores new ones")
      ->check(CLI::NonNegativeNumber);
  int principals = 1;
  app.add_option("--principals", principals,
                 "API keys: bench-key (principal bench), and bench-key-N (bench-N) for N up to"
                 " this minus one")
      ->check(CLI::Range(1, 1000));
  bool uncounted = false;
  app.add_flag("--drop-counter-triggers", uncounted,
               "SQLite: drop the triggers that keep the row counters, to measure what they cost"
               " (the counters, /metrics' row figures and the staged quota are then wrong)");
  int wal_pages = exactly::sqlite::options{}.checkpoint_pages;
  app.add_option("--wal-pages", wal_pages,
                 "SQLite: the WAL is checkpointed from this many pages (sqlite::with_wal_pages)")
      ->check(CLI::Range(100, 1 << 20));
  long fsync_delay_us = 0;
  app.add_option("--fsync-delay-us", fsync_delay_us,
                 "a slow disk: every SQLite fsync takes this much longer")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (fsync_delay_us > 0)
    exactly::bench::install_slow_sync_vfs(std::chrono::microseconds(fsync_delay_us));
  spdlog::set_default_logger(spdlog::stderr_color_mt("bench-server"));
  spdlog::set_level(spdlog::level::warn);  // the benchmark prints the figures
  const auto address = exactly::parse_host_port(listen);
  if (!address) {
    std::cerr << "--listen must be HOST:PORT\n";
    return 2;
  }
  try {
    exactly::server::connector_options co;
    co.db_path = db;
    co.max_staged_per_principal = 1'000'000;
    co.separate_reads = !reads_together;
    co.times.acceptance_window_ms = static_cast<std::int64_t>(window_s * 1000);
    if (relaxed)
      co.db.sync = exactly::sqlite::synchronous::normal;
    co.db = exactly::sqlite::with_wal_pages(co.db, wal_pages);
    if (!postgres.empty())
      co.postgres = exactly::pg::options{postgres, !relaxed};
    co.postgres_connections = pg_connections;
    co.postgres_unflushed_lane = unflushed_lane;
    if (uncounted && !postgres.empty()) {
      std::cerr << "--drop-counter-triggers is for SQLite (PostgreSQL's server counts inline)\n";
      return 2;
    }
    exactly::server::connector connector(co);
    if (uncounted && exactly::bench::drop_counter_triggers(connector.db()) == 0) {
      std::cerr << "--drop-counter-triggers found no counter trigger to drop\n";
      return 1;
    }
    exactly::bench::install_connector_route(connector, writes);
    exactly::server::server_options so;
    so.host = address->host;
    so.port = address->port;
    for (int n = 0; n < principals; ++n)
      so.api_keys.push_back({exactly::bench::bench_api_key(n), exactly::bench::bench_principal(n)});
    so.group_commit = !ungrouped;
    so.background_sync = !no_background_sync;
    so.sweep_interval = std::chrono::milliseconds(static_cast<std::int64_t>(sweep_s * 1000));
    exactly::server::http_server server(so, connector);
    exactly::bench::install_http_routes(
        server, connector, writes,
        {.window = std::chrono::milliseconds(static_cast<std::int64_t>(key_window_s * 1000))});
    const std::uint16_t port = server.start();
    std::cout << "listening on " << so.host << ':' << port << std::endl;
    server.run();
  } catch (const std::exception& e) {
    std::cerr << "bench-server: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
