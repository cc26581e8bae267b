// The client's queue store on SQLite (contract/client_queue_store_contract.cpp).
// The same bodies run on PostgreSQL in exactly_postgres_client_tests.
#include "contract/client_contracts.hpp"

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, queue_store_contract, &open_sqlite_db);

}  // namespace exactly::test
