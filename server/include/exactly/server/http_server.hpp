#pragma once
// The HTTP front of a connector on Boost.Beast: keep-alive, deadlines, limits, authentication,
// a small router, /healthz, /metrics, the optional operator page, the sweeper and outbox
// dispatcher, graceful shutdown.
// One network thread carries out I/O and reads GETs through the connector's read-only
// connection; one storage thread per connection of the connector (one on SQLite) runs every
// other database call, in order (every request of one id on the same one).

#include <exactly/server/connector.hpp>
#include <exactly/server/http_message.hpp>
#include <exactly/server/operator_page.hpp>
#include <exactly/server/test_control.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace exactly::server {

struct api_key {
  std::string key;        // the secret sent as "Authorization: Bearer <key>"
  std::string principal;  // the owner name ids are bound to
};

// A client certificate that names a principal, by the SHA-256 of its DER encoding.
struct client_certificate {
  std::string sha256_hex;  // 64 hex digits, case-insensitive, ':' separators allowed
  std::string principal;
};

// https. Empty certificate_chain_file: plain http.
struct tls_options {
  std::string certificate_chain_file{};  // PEM, the server's certificate first
  std::string private_key_file{};        // PEM
  // Non-empty: every client must present a certificate issued by a CA in this PEM file, or the
  // handshake fails. A certificate listed in client_certificates then names the principal; the
  // others authenticate with an API key like plain clients.
  std::string client_ca_file{};
  std::vector<client_certificate> client_certificates{};
  std::chrono::milliseconds handshake_timeout{10000};
};

// One line per request answered (docs/metrics.md has the format): time, remote address,
// principal, method, target, status, body bytes, duration and the protocol outcome.
struct access_log_options {
  bool enabled = false;  // off by default
  // "": each line goes to spdlog's default logger at info level; else it is appended to this
  // file (created if missing), one line per request, flushed as written.
  std::string file{};
};

struct server_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;           // 0 = any free port; see http_server::port()
  bool open_mode = false;           // no authentication, one anonymous principal
  std::vector<api_key> api_keys{};  // these or tls.client_certificates, unless open_mode
  tls_options tls{};
  std::size_t max_body_bytes = 1 << 20;            // larger bodies: 413 payload-too-large
  std::size_t max_header_bytes = 16 * 1024;        // larger headers: 431 header-too-large
  std::chrono::milliseconds read_timeout{15000};   // a whole request, headers and body
  std::chrono::milliseconds write_timeout{15000};  // a whole response
  std::chrono::milliseconds idle_timeout{60000};   // keep-alive wait for the next request
  // Connections served at once; one more is accepted and closed at once, unread. With the
  // body and header limits this bounds the memory connections hold (README, "Limits").
  std::size_t max_connections = 512;
  // TLS handshakes in progress at once (they run on the network thread); a connection that
  // would start one more is closed at once, before its handshake.
  std::size_t max_tls_handshakes = 32;
  std::chrono::milliseconds sweep_interval{60000};
  std::chrono::milliseconds dispatch_interval{250};  // outbox poll when idle
  std::chrono::milliseconds shutdown_grace{10000};   // then open connections are closed
  // Requests that reach the storage thread while a commit is under way share the next commit
  // (one fsync); each is answered only once its group is committed. false: one commit each.
  bool group_commit = true;
  // false: a machine or PostgreSQL crash may undo PUTs and DELETEs answered since the last flush.
  bool flush_every_commit = false;
  // SQLite in WAL mode: a commit that must be flushed is committed without waiting for the disk
  // and a thread of its own syncs the WAL; its answers (and reads that may have seen it) wait for
  // that sync, while PUTs and DELETEs committed meanwhile are answered. false: the storage thread
  // waits for each flushed commit's fsync. Either way nothing that needs the disk is answered
  // before it is on it.
  bool background_sync = true;
  // /metrics answers only requests with a valid API key (or a client certificate that names a
  // principal); off by default, so a scraper on the local network needs no key.
  bool metrics_need_key = false;
  // The row gauges and connector counters a scrape shows are read on the storage thread at most
  // once per this age (concurrent scrapes share a reading): a scrape loop cannot take the
  // storage thread from requests. Request counters, and the commit groups' counts and times,
  // are always current. 0: every scrape reads.
  std::chrono::milliseconds metrics_max_age{1000};
  access_log_options access_log{};
  // Off by default. NEVER in production: lets whoever has its key move the server's clock and run
  // its sweeper (proto-spec §12).
  test_control_options test_control{};
  // Off by default: a read-only HTML page for operators at GET /_exactly/operator, behind its
  // own key (operator_page.hpp).
  operator_page_options operator_page{};
};

class http_server {
 public:
  // Throws std::invalid_argument if authentication is neither configured nor explicitly open,
  // if the TLS files are incomplete or do not load, if a connection limit is 0, or for a
  // test-control or operator-page key that is too short or equal to an API key.
  http_server(server_options opts, connector& c);
  // Stops gracefully if still running.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Adds a plain route; `pattern` segments like {name} match one path segment. Before start().
  // `authenticated` routes need an API key unless the server is in open mode.
  void add_route(std::string method, std::string pattern, route_handler handler,
                 bool authenticated = true);

  // Binds, listens and starts the threads, serving the connector's routes registered by now.
  // Returns the bound port. Throws on bind failure.
  std::uint16_t start();
  // start() if needed, then serves until SIGINT/SIGTERM or stop(), then shuts down gracefully.
  void run();
  // From now on SIGINT and SIGTERM shut the server down gracefully instead of ending the
  // process (run() does this too): call it before start() when the process announces that it
  // listens before it calls run(), so a signal in between is not lost. Idempotent.
  void shut_down_on_signals();
  // Stops accepting, lets in-flight requests finish (up to shutdown_grace), closes idle
  // connections, drains storage work and joins the threads. Idempotent; any thread.
  void stop();
  std::uint16_t port() const;
  // The Prometheus text exposition served at /metrics.
  std::string metrics_text();
  // Runs `fn` on the storage thread and waits for it (for tests and tools).
  void run_on_storage(std::function<void()> fn);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace exactly::server
