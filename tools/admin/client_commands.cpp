// exactly-admin client ...: a client database's queues, invocations and error queues.
#include "commands.hpp"

namespace exactly::admin {

void add_client_commands(CLI::App&, action_fn&) {}

}  // namespace exactly::admin
