#pragma once
// An in-process connector server with the echo app on 127.0.0.1:0, a fresh database in a temp
// directory, API keys alice/bob, and a clock the test can move forward.

#include <echo_app.hpp>

#include <exactly/server/http_server.hpp>

#include <atomic>
#include <filesystem>
#include <memory>

namespace exactly::test {
using namespace exactly::samples;

// A fresh temporary directory, removed on destruction.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct echo_server_config {
  std::size_t max_body_bytes = 1024;
  std::int64_t max_staged_per_principal = 3;
  std::int64_t max_staged_bytes_per_principal = 2048;
  std::size_t max_connections = 512;
  std::size_t max_tls_handshakes = 32;
  bool open_mode = false;
  std::chrono::milliseconds read_timeout{15000};
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds shutdown_grace{10000};
  std::chrono::milliseconds busy_timeout{10000};    // SQLite wait for another writer
  std::chrono::milliseconds read_lock_timeout{50};  // connector_options::read_lock_timeout
  bool synchronous_normal = false;                  // opt out of synchronous=FULL (benchmarks only)
  bool flush_every_commit = false;                  // server_options::flush_every_commit
  bool background_sync = true;                      // server_options::background_sync
  bool group_commit = true;                         // server_options::group_commit
  bool plain_route = true;    // POST /plain/{id}: one insert, the benchmark's baseline
  server::tls_options tls{};  // https when tls.certificate_chain_file is set
  bool metrics_need_key = false;
  std::chrono::milliseconds metrics_max_age{1000};
  server::access_log_options access_log{};  // off by default
  // The engine: a PostgreSQL connection string, else SQLite in the test's directory. The default
  // is a fresh schema of the test cluster when EXACTLY_TEST_ENGINE=postgres, so a suite written
  // for the echo server runs on either engine.
  std::string postgres = default_test_postgres();
  // The PostgreSQL conninfo suites use when EXACTLY_TEST_ENGINE=postgres, else "".
  static std::string default_test_postgres();
  // connector_options::postgres_connections: EXACTLY_TEST_PG_CONNECTIONS when set, else 1.
  std::size_t postgres_connections = default_test_pg_connections();
  // connector_options::postgres_unflushed_lane: EXACTLY_TEST_PG_UNFLUSHED_LANE=1, else off.
  bool postgres_unflushed_lane = default_test_pg_unflushed_lane();
  static std::size_t default_test_pg_connections();
  static bool default_test_pg_unflushed_lane();
};

class echo_server {
 public:
  explicit echo_server(echo_server_config cfg = {});
  ~echo_server();

  std::uint16_t port() const { return port_; }
  std::string db_path() const { return (dir_.path() / "server.db").string(); }
  // The server clock (system time plus the advance so far).
  std::int64_t now_ms() const;
  void advance_seconds(std::int64_t s) { offset_ms_ += s * 1000; }
  server::sweep_result sweep();
  server::state_counts rows();
  std::int64_t executions(const std::string& id);
  std::int64_t executions_total();
  std::int64_t deliveries(const std::string& id);
  std::int64_t outbox_pending();
  std::string metrics() { return http_->metrics_text(); }
  // The whole-number value of the series `name` (with its labels, if it has any) in metrics();
  // -1 when it has no such line.
  std::int64_t metric(const std::string& name);
  void stop() { http_->stop(); }
  server::connector& connector() { return *connector_; }
  server::http_server& http() { return *http_; }

 private:
  temp_dir dir_;
  std::atomic<std::int64_t> offset_ms_{0};
  std::unique_ptr<server::connector> connector_;
  std::unique_ptr<server::http_server> http_;
  std::uint16_t port_ = 0;
};

}  // namespace exactly::test
