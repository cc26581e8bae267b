// The client's store, endpoint and runtime contracts (tests/contract/) on PostgreSQL.
#include "client_test_db.hpp"
#include "contract/client_contracts.hpp"

namespace exactly::test {
namespace {

std::unique_ptr<test_db> open_fresh_pg_db() {
  return open_pg_db();
}

}  // namespace

EXACTLY_CLIENT_CONTRACT(postgres, invocation_store_contract, &open_fresh_pg_db);
EXACTLY_CLIENT_CONTRACT(postgres, endpoint_contract, &open_fresh_pg_db);
EXACTLY_CLIENT_CONTRACT(postgres, runtime_contract, &open_fresh_pg_db);
EXACTLY_CLIENT_CONTRACT(postgres, inspect_contract, &open_fresh_pg_db);
EXACTLY_CLIENT_CONTRACT(postgres, queue_store_contract, &open_fresh_pg_db);

}  // namespace exactly::test
