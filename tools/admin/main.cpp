// exactly-admin: what an operator inspects and repairs in a server's or a client's database,
// either engine: interactions, the server outbox and its dead letters; the client's queues,
// invocations and error queues. Read-only unless a mutating subcommand is named; every change is
// logged on stderr (and with --audit-log to a file). Exit status: 0 done, 1 something named was
// not found, 2 bad input or no such database, 3 a database error.

#include "admin_db.hpp"
#include "commands.hpp"

#include <exactly/common/storage_error.hpp>

#include <layered_config.hpp>

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{
      "exactly-admin: inspect and repair the databases of exactly servers and clients (read-only "
      "unless a mutating subcommand is named)"};
  exactly::cli_config::layered_config layers(app);
  // A mutation's confirmation and its "every row" choice are typed on purpose, never inherited
  // from the environment or a config file.
  layers.command_line_only("yes");
  layers.command_line_only("all");
  // A PostgreSQL connection string may hold a password: --print-config hides it. (Its variable is
  // the layered configuration's EXACTLY_POSTGRES.)
  layers.secret("postgres");
  app.require_subcommand(1);
  exactly::admin::action_fn action;
  exactly::admin::add_server_commands(app, action);
  exactly::admin::add_client_commands(app, action);
  // --help and --print-config exit 0; any parse error is bad input, 2.
  if (const int status = layers.parse(argc, argv, std::cout, std::cerr); status >= 0)
    return status;
  try {
    return action ? action() : 2;
  } catch (const exactly::admin::usage_error& e) {
    std::cerr << "exactly-admin: " << e.what() << '\n';
    return 2;
  } catch (const exactly::storage_error& e) {
    std::cerr << "exactly-admin: " << e.what() << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "exactly-admin: " << e.what() << '\n';
    return 3;
  }
}
