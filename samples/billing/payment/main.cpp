// payment-service: the billing sample's payment provider, a connector server.
// Prints "listening on HOST:PORT" as its first line once it accepts connections.

#include "payment_app.hpp"

#include <key_options.hpp>
#include <layered_config.hpp>
#include <operator_page_flags.hpp>
#include <server_flags.hpp>
#include <test_control_flags.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <exactly/common/host_port.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"payment-service: /payment/authorize/{id} and /accounts/{customer_id}"};
  exactly::cli_config::layered_config layers(app);
  exactly::server::server_options so;
  exactly::server::connector_options co;
  std::string listen = "127.0.0.1:8081";
  std::string db = "payment.db";
  std::int64_t initial_balance = 100'000;
  exactly::samples::keys::key_flags key_flags;
  app.add_option("--listen", listen, "HOST:PORT to listen on (port 0 picks a free one)");
  app.add_option("--db", db, "SQLite database file");
  std::string postgres;
  app.add_option("--postgres", postgres,
                 "store in PostgreSQL instead (a libpq connection string); several instances may "
                 "share it");
  app.add_option("--initial-balance-cents", initial_balance, "opening balance of a new account");
  exactly::samples::keys::add_key_options(app, key_flags);
  exactly::samples::keys::test_control_flags control_flags;
  exactly::samples::keys::add_test_control_options(app, control_flags);
  exactly::samples::keys::operator_page_flags page_flags;
  exactly::samples::keys::add_operator_page_options(app, page_flags, so);
  exactly::samples::keys::add_server_options(app, so, co);
  exactly::samples::keys::protect_key_options(app, layers);
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;
  spdlog::set_default_logger(spdlog::stderr_color_mt("payment-service"));

  const auto address = exactly::parse_host_port(listen);
  if (!address) {
    std::cerr << "--listen must be HOST:PORT\n";
    return 2;
  }
  so.host = address->host;
  so.port = address->port;
  if (!exactly::samples::keys::apply_keys(key_flags, so, "payment-service", std::cerr))
    return 2;
  co.db_path = db;
  if (!exactly::samples::keys::apply_test_control(control_flags, so, co, "payment-service",
                                                  std::cerr))
    return 2;
  if (!exactly::samples::keys::apply_operator_page(page_flags, so, "payment-service", std::cerr))
    return 2;
  try {
    if (!postgres.empty())
      co.postgres = exactly::pg::options{postgres};
    exactly::server::connector connector(co);
    exactly::server::http_server server(so, connector);
    exactly::samples::payment::install(connector, server, initial_balance);
    server.shut_down_on_signals();  // a SIGTERM right after "listening" is a graceful stop
    const std::uint16_t port = server.start();
    std::cout << "listening on " << so.host << ':' << port << std::endl;
    server.run();
  } catch (const std::exception& e) {
    std::cerr << "payment-service: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
