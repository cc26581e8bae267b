#pragma once
// exactly-admin's subcommands: each registers its options on a CLI11 app and, once parsed,
// leaves the work to run in `action` (an exit status: 0 done, 1 something named was not found,
// 2 bad input; errors are thrown).

#include <CLI/CLI.hpp>

#include <functional>

namespace exactly::admin {

using action_fn = std::function<int()>;

// `server --sqlite PATH | --postgres CONNINFO <listing or mutation>` (server/inspect.hpp).
void add_server_commands(CLI::App& app, action_fn& action);
// `client --sqlite PATH | --postgres CONNINFO <listing or mutation>` (client/inspect.hpp).
void add_client_commands(CLI::App& app, action_fn& action);

}  // namespace exactly::admin
