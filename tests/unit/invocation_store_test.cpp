// The invocation store's contract (contract/client_invocation_store_contract.cpp) on SQLite.
// The same bodies run on PostgreSQL in exactly_postgres_client_tests.
#include "contract/client_contracts.hpp"

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, invocation_store_contract, &open_sqlite_db);

}  // namespace exactly::test
