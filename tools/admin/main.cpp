// exactly-admin: what an operator inspects and repairs in a server's or a client's database,
// either engine: interactions, the server outbox and its dead letters; the client's queues,
// invocations and error queues. Read-only unless a mutating subcommand is named; every change is
// logged on stderr (and with --audit-log to a file). Exit status: 0 done, 1 something named was
// not found, 2 bad input or no such database, 3 a database error.

#include "admin_db.hpp"
#include "commands.hpp"

#include <exactly/common/storage_error.hpp>

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{
      "exactly-admin: inspect and repair the databases of exactly servers and clients (read-only "
      "unless a mutating subcommand is named)"};
  app.require_subcommand(1);
  exactly::admin::action_fn action;
  exactly::admin::add_server_commands(app, action);
  exactly::admin::add_client_commands(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; any other parse error is bad input
  }
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
