#include "echo_server.hpp"

#include "metrics_text.hpp"
#include "pg_cluster.hpp"

#include <exactly/common/clock.hpp>
#include <exactly/common/database.hpp>
#include <exactly/common/postgres.hpp>
#include <exactly/common/sqlite.hpp>

#include <algorithm>
#include <cstdlib>
#include <exactly/common/request_id.hpp>
#include <string_view>

namespace exactly::test {

temp_dir::temp_dir() {
  path_ =
      std::filesystem::temp_directory_path() / ("exactly-test-" + request_id::mint().to_string());
  std::filesystem::create_directories(path_);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string echo_server_config::default_test_postgres() {
  const char* engine = std::getenv("EXACTLY_TEST_ENGINE");
  if (!engine || std::string_view(engine) != "postgres")
    return "";
  return test_cluster().fresh_schema();
}

std::size_t echo_server_config::default_test_pg_connections() {
  const char* n = std::getenv("EXACTLY_TEST_PG_CONNECTIONS");
  return n ? static_cast<std::size_t>(std::stoul(n)) : 1;
}

bool echo_server_config::default_test_pg_unflushed_lane() {
  const char* on = std::getenv("EXACTLY_TEST_PG_UNFLUSHED_LANE");
  return on && std::string_view(on) == "1";
}

echo_server::echo_server(echo_server_config cfg) {
  server::connector_options co;
  co.db_path = db_path();
  if (!cfg.postgres.empty()) {
    co.postgres = pg::options{cfg.postgres};
    co.postgres_connections = cfg.postgres_connections;
    co.postgres_unflushed_lane = cfg.postgres_unflushed_lane;
  }
  co.max_staged_per_principal = cfg.max_staged_per_principal;
  co.max_staged_bytes_per_principal = cfg.max_staged_bytes_per_principal;
  co.clock = [this] { return now_ms(); };
  co.db.busy_timeout = cfg.busy_timeout;
  co.read_lock_timeout = cfg.read_lock_timeout;
  if (cfg.synchronous_normal)
    co.db.sync = sqlite::synchronous::normal;
  connector_ = std::make_unique<server::connector>(co);
  register_echo_app(*connector_);

  server::server_options so;
  so.open_mode = cfg.open_mode;
  if (!cfg.open_mode)
    so.api_keys = {{"alice-key", "alice"}, {"bob-key", "bob"}};
  so.tls = cfg.tls;
  so.metrics_need_key = cfg.metrics_need_key;
  so.metrics_max_age = cfg.metrics_max_age;
  so.access_log = cfg.access_log;
  so.max_body_bytes = cfg.max_body_bytes;
  so.read_timeout = cfg.read_timeout;
  so.idle_timeout = cfg.idle_timeout;
  so.shutdown_grace = cfg.shutdown_grace;
  so.max_connections = cfg.max_connections;
  so.max_tls_handshakes = cfg.max_tls_handshakes;
  so.dispatch_interval = std::chrono::milliseconds(20);
  so.sweep_interval = std::chrono::hours(24);  // tests sweep explicitly
  so.flush_every_commit = cfg.flush_every_commit;
  so.background_sync = cfg.background_sync;
  so.group_commit = cfg.group_commit;
  http_ = std::make_unique<server::http_server>(so, *connector_);
  if (cfg.plain_route) {
    http_->add_route("POST", "/plain/{id}", [this](const server::http_request& r) {
      connector_->storage().execute("INSERT INTO plain_writes(id, body) VALUES(?, ?)",
                                    r.params.at("id"), r.body);
      return server::http_response{200, "application/json", R"({"ok":true})", {}};
    });
    connector_->storage().exec(
        "CREATE TABLE IF NOT EXISTS plain_writes (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  }
  port_ = http_->start();
}

echo_server::~echo_server() {
  http_->stop();
}

std::int64_t echo_server::now_ms() const {
  return system_now_ms() + offset_ms_.load();
}

std::int64_t echo_server::metric(const std::string& name) {
  return static_cast<std::int64_t>(series_value(metrics(), name));
}

server::sweep_result echo_server::sweep() {
  server::sweep_result r;
  http_->run_on_storage([&] { r = connector_->sweep(); });
  return r;
}

server::state_counts echo_server::rows() {
  server::state_counts r;
  http_->run_on_storage([&] { r = connector_->counts(); });
  return r;
}

std::int64_t echo_server::executions(const std::string& id) {
  std::int64_t n = 0;
  http_->run_on_storage([&] { n = echo_executions(connector_->storage(), id); });
  return n;
}

std::int64_t echo_server::executions_total() {
  std::int64_t n = 0;
  http_->run_on_storage([&] { n = echo_executions_total(connector_->storage()); });
  return n;
}

std::int64_t echo_server::deliveries(const std::string& id) {
  std::int64_t n = 0;
  http_->run_on_storage([&] { n = echo_deliveries(connector_->storage(), id); });
  return n;
}

std::int64_t echo_server::outbox_pending() {
  std::int64_t n = 0;
  http_->run_on_storage([&] { n = connector_->outbox_pending(); });
  return n;
}

}  // namespace exactly::test
