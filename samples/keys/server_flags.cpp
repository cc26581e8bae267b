// The sample servers' server and connector settings (server_flags.hpp).
#include "server_flags.hpp"

#include <units.hpp>

#include <exactly/common/sqlite_wal_pages.hpp>

#include <cctype>
#include <stdexcept>
#include <string>

namespace exactly::samples::keys {

using cli_config::add_duration;
using cli_config::add_size;
using cli_config::zero;

server::client_certificate parse_client_certificate(std::string_view entry) {
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos || colon == 0)
    throw std::invalid_argument("expected PRINCIPAL:SHA256 (the certificate's SHA-256, hex)");
  std::size_t digits = 0;
  for (const char c : entry.substr(colon + 1)) {
    if (std::isxdigit(static_cast<unsigned char>(c)))
      ++digits;
    else if (c != ':')
      throw std::invalid_argument("the SHA-256 may hold only hex digits and ':'");
  }
  if (digits != 64)
    throw std::invalid_argument("the SHA-256 must have 64 hex digits");
  return {std::string(entry.substr(colon + 1)), std::string(entry.substr(0, colon))};
}

void add_server_options(CLI::App& app, server::server_options& so, server::connector_options& co) {
  const std::string tls = "TLS";
  app.add_option("--tls-certificate-chain-file", so.tls.certificate_chain_file,
                 "serve https with this PEM certificate chain (the server's certificate first)")
      ->group(tls);
  app.add_option("--tls-private-key-file", so.tls.private_key_file,
                 "the PEM private key of --tls-certificate-chain-file")
      ->group(tls);
  app.add_option("--tls-client-ca-file", so.tls.client_ca_file,
                 "require a client certificate issued by a CA of this PEM file")
      ->group(tls);
  app.add_option_function<std::vector<std::string>>(
         "--tls-client-certificate",
         [&so](const std::vector<std::string>& entries) {
           so.tls.client_certificates.clear();
           for (const std::string& e : entries) {
             try {
               so.tls.client_certificates.push_back(parse_client_certificate(e));
             } catch (const std::invalid_argument& x) {
               throw CLI::ValidationError("--tls-client-certificate", x.what());
             }
           }
         },
         "PRINCIPAL:SHA256, repeatable: a client certificate (by the SHA-256 of its DER) that "
         "authenticates as PRINCIPAL without an API key")
      ->group(tls);
  add_duration(app, "--tls-handshake-timeout", so.tls.handshake_timeout,
               "a TLS handshake must end within this")
      ->group(tls);

  const std::string limits = "Limits and timeouts";
  add_size(app, "--max-body-bytes", so.max_body_bytes, "largest accepted request body (then 413)")
      ->group(limits);
  add_size(app, "--max-header-bytes", so.max_header_bytes,
           "largest accepted request header (then 431)")
      ->group(limits);
  add_duration(app, "--read-timeout", so.read_timeout, "reading a whole request")->group(limits);
  add_duration(app, "--write-timeout", so.write_timeout, "writing a whole response")->group(limits);
  add_duration(app, "--idle-timeout", so.idle_timeout, "keep-alive wait for the next request")
      ->group(limits);
  app.add_option("--max-connections", so.max_connections, "connections served at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->group(limits);
  app.add_option("--max-tls-handshakes", so.max_tls_handshakes, "TLS handshakes at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->group(limits);
  add_duration(app, "--shutdown-grace", so.shutdown_grace,
               "on SIGTERM, in-flight requests may finish within this", zero::allowed)
      ->group(limits);
  app.add_option("--max-staged-per-principal", co.max_staged_per_principal,
                 "staged requests a principal may hold (then 429)")
      ->check(CLI::PositiveNumber)
      ->group(limits);
  add_size(app, "--max-staged-bytes-per-principal", co.max_staged_bytes_per_principal,
           "staged body bytes a principal may hold (then 429)")
      ->group(limits);
  app.add_option("--postgres-connections", co.postgres_connections,
                 "with --postgres: connections to it, one storage thread each; the requests of one "
                 "id always use the same one")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->group(limits);
  app.add_flag("--postgres-unflushed-lane", co.postgres_unflushed_lane,
               "with --postgres-connections 2 or more: the last connection takes only the PUTs "
               "and DELETEs that may commit unflushed, so they never wait behind a flush (a slow "
               "disk)")
      ->group(limits);

  const std::string timing = "Protocol timing";
  add_duration(app, "--staged-ttl", co.times.staged_ttl_ms,
               "a staged request not POSTed within this is dropped")
      ->group(timing);
  add_duration(app, "--response-retention", co.times.response_retention_ms,
               "a stored response is kept this long for GETs")
      ->group(timing);
  add_duration(app, "--acceptance-window", co.times.acceptance_window_ms,
               "request ids older than this are refused; tombstones are kept this long")
      ->group(timing);
  add_duration(app, "--max-future-skew", co.times.max_future_skew_ms,
               "request ids this far ahead of the server's clock are refused", zero::allowed)
      ->group(timing);

  const std::string jobs = "Background jobs";
  add_duration(app, "--sweep-interval", so.sweep_interval, "how often expired rows are swept")
      ->group(jobs);
  add_duration(app, "--dispatch-interval", so.dispatch_interval, "outbox poll when idle")
      ->group(jobs);
  app.add_option("--outbox-max-attempts", co.outbox_max_attempts,
                 "deliveries of an outbox message before it becomes a dead letter")
      ->check(CLI::PositiveNumber)
      ->group(jobs);
  app.add_option("--group-commit", so.group_commit,
                 "true: requests that arrive during a commit share the next one (one fsync); "
                 "false: one commit each")
      ->default_str(so.group_commit ? "true" : "false")
      ->group(jobs);
  app.add_option("--background-sync", so.background_sync,
                 "true (SQLite): flushed commits are synced by a thread of their own and their "
                 "answers wait for it, while other commits go on; false: each waits for its fsync")
      ->default_str(so.background_sync ? "true" : "false")
      ->group(jobs);
  app.add_option_function<int>(
         "--sqlite-wal-pages", [&co](int pages) { co.db = sqlite::with_wal_pages(co.db, pages); },
         "SQLite: the WAL is copied into the database from this many pages of 4 KiB and starts "
         "over soon after, one commit paying a checkpoint's fsyncs each time: more pages, fewer "
         "such stalls on a disk slow to sync, more disk (the WAL's file stays about that size)")
      ->check(CLI::Range(100, 1 << 20))
      ->default_str(std::to_string(co.db.checkpoint_pages))
      ->group(jobs);
  app.add_flag("--flush-every-commit", so.flush_every_commit,
               "flush PUTs and DELETEs to disk before answering too (by default a crash of the "
               "machine or of PostgreSQL may take back those answered since the last flush)")
      ->group(jobs);
  app.add_flag("--metrics-need-key", so.metrics_need_key,
               "/metrics answers only requests with a valid API key")
      ->group(jobs);
  add_duration(app, "--metrics-max-age", so.metrics_max_age,
               "row gauges a scrape shows are read at most once per this (0: every scrape)",
               zero::allowed)
      ->group(jobs);
  const std::string logs = "Access log";
  app.add_flag("--access-log", so.access_log.enabled,
               "one line per request (time, peer, principal, method, target, status, bytes, "
               "duration, outcome; docs/metrics.md) to the log, or to --access-log-file")
      ->group(logs);
  app.add_option("--access-log-file", so.access_log.file,
                 "with --access-log: append the lines to this file instead of the log")
      ->group(logs);
}

}  // namespace exactly::samples::keys
