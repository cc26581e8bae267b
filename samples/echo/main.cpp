// echo-server: a tiny connector server to walk the protocol by hand (see the README) and the
// server process of the crash tests. Prints "listening on HOST:PORT" once it accepts connections.

#include "echo_app.hpp"

#include <key_options.hpp>
#include <layered_config.hpp>
#include <operator_page_flags.hpp>
#include <server_flags.hpp>
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
  exactly::cli_config::layered_config layers(app);
  exactly::server::server_options so;
  exactly::server::connector_options co;
  std::string listen = "127.0.0.1:8080";
  std::string db = "echo-server.db";
  exactly::samples::keys::key_flags key_flags;
  bool relaxed = false;
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0 picks a free one)");
  app.add_option("--db", db, "SQLite database file");
  std::string postgres;
  app.add_option("--postgres", postgres,
                 "store in PostgreSQL instead (a libpq connection string); several instances may "
                 "share it");
  exactly::samples::keys::add_key_options(app, key_flags);
  exactly::samples::keys::test_control_flags control_flags;
  exactly::samples::keys::add_test_control_options(app, control_flags);
  exactly::samples::keys::operator_page_flags page_flags;
  exactly::samples::keys::add_operator_page_options(app, page_flags, so);
  app.add_flag("--synchronous-normal", relaxed,
               "opt out of synchronous=FULL (faster, may lose the last commits on power loss)");
  exactly::samples::keys::add_server_options(app, so, co);
  bool print_id = false;
  layers.command_line_only(
      app.add_flag("--print-id", print_id, "print a fresh request id (UUIDv7) and exit"));
  exactly::samples::keys::protect_key_options(app, layers);
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;
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
  so.host = address->host;
  so.port = address->port;
  if (!exactly::samples::keys::apply_keys(key_flags, so, "echo-server", std::cerr))
    return 2;
  co.db_path = db;
  if (!exactly::samples::keys::apply_test_control(control_flags, so, co, "echo-server", std::cerr))
    return 2;
  if (!exactly::samples::keys::apply_operator_page(page_flags, so, "echo-server", std::cerr))
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
