// The runtime's worker threads on SQLite (contract/client_runtime_contract.cpp): idle workers wake
// on notify() instead of waiting out idle_poll.
// The same bodies run on PostgreSQL in exactly_postgres_client_tests.
#include "contract/client_contracts.hpp"

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, runtime_contract, &open_sqlite_db);

}  // namespace exactly::test
