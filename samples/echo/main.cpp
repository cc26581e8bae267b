// echo-server: a tiny connector server to walk the protocol by hand (see the README) and the
// server process of the crash tests. Prints "listening on HOST:PORT" once it accepts connections.

#include "echo_app.hpp"

#include <key_options.hpp>
#include <test_control_flags.hpp>

#include <exactly/common/request_id.hpp>
#include <exactly/server/http_server.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <exactly/common/host_port.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"exactly echo server: the /vectors/echo/{id} connector route"};
  std::string listen = "127.0.0.1:8080";
  std::string db = "echo-server.db";
  exactly::samples::keys::key_flags key_flags;
  bool relaxed = false;
  std::size_t max_body = 1 << 20;
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0 picks a free one)");
  app.add_option("--db", db, "SQLite database file");
  std::string postgres;
  app.add_option("--postgres", postgres,
                 "store in PostgreSQL instead (a libpq connection string); several instances may "
                 "share it");
  exactly::samples::keys::add_key_options(app, key_flags);
  exactly::samples::keys::test_control_flags control_flags;
  exactly::samples::keys::add_test_control_options(app, control_flags);
  app.add_flag("--synchronous-normal", relaxed,
               "opt out of synchronous=FULL (faster, may lose the last commits on power loss)");
  app.add_option("--max-body-bytes", max_body, "largest accepted request body");
  std::int64_t max_staged = 10000;
  std::int64_t max_staged_bytes = 256LL << 20;
  app.add_option("--max-staged-per-principal", max_staged,
                 "staged requests a principal may hold (then 429)");
  app.add_option("--max-staged-bytes-per-principal", max_staged_bytes,
                 "staged body bytes a principal may hold (then 429)");
  bool print_id = false;
  app.add_flag("--print-id", print_id, "print a fresh request id (UUIDv7) and exit");
  CLI11_PARSE(app, argc, argv);
  if (print_id) {
    std::cout << exactly::request_id::mint().to_string() << '\n';
    return 0;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("echo-server"));  // stdout is for the port

  const auto address = exactly::parse_host_port(listen);
  if (!address) {
    std::cerr << "--listen must be HOST:PORT\n";
    return 2;
  }
  exactly::server::server_options so;
  so.host = address->host;
  so.port = address->port;
  so.max_body_bytes = max_body;
  if (!exactly::samples::keys::apply_keys(key_flags, so, "echo-server", std::cerr))
    return 2;
  exactly::server::connector_options co;
  co.db_path = db;
  co.max_staged_per_principal = max_staged;
  co.max_staged_bytes_per_principal = max_staged_bytes;
  if (!exactly::samples::keys::apply_test_control(control_flags, so, co, "echo-server", std::cerr))
    return 2;
  try {
    if (relaxed)
      co.db.sync = exactly::sqlite::synchronous::normal;
    if (!postgres.empty())
      co.postgres = exactly::pg::options{postgres, !relaxed};
    exactly::server::connector connector(co);
    exactly::samples::register_echo_app(connector);
    so.test_control.executions = [&connector](const std::string& id) {
      return std::optional<std::int64_t>(
          exactly::samples::echo_executions(connector.storage(), id));
    };
    exactly::server::http_server server(so, connector);
    server.shut_down_on_signals();  // a SIGTERM right after "listening" is a graceful stop
    const std::uint16_t port = server.start();
    std::cout << "listening on " << so.host << ':' << port << std::endl;
    server.run();
  } catch (const std::exception& e) {
    std::cerr << "echo-server: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
