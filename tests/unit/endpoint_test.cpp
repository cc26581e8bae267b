// Endpoints on a shared SQLite database (contract/client_endpoint_contract.cpp): atomic handling,
// retries, error queue, restarts.
// The same bodies run on PostgreSQL in exactly_postgres_client_tests.
#include "contract/client_contracts.hpp"

namespace exactly::test {

EXACTLY_CLIENT_CONTRACT(sqlite, endpoint_contract, &open_sqlite_db);

}  // namespace exactly::test
