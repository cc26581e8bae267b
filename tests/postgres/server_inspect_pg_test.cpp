// The server inspection API on PostgreSQL, and a schema without the server's tables.
#include "pg_cluster.hpp"
#include "server/src/pg_store.hpp"
#include "tests/contract/server_inspect_contract.hpp"

namespace exactly::server {
namespace {

INSTANTIATE_TEST_SUITE_P(engines, server_inspect_contract,
                         ::testing::Values(inspect_factory([](const std::string&) {
                           const std::string conninfo = test::test_cluster().fresh_schema();
                           inspected t;
                           t.store = std::make_unique<pg_store>(pg::options{conninfo});
                           t.pg_conn = std::make_unique<pg::connection>(pg::options{conninfo});
                           return t;
                         })),
                         [](const auto&) { return std::string("postgres"); });

TEST(server_inspect_postgres, a_schema_without_the_server_tables_is_told_apart) {
  pg::connection other(pg::options{test::test_cluster().fresh_schema()});
  other.exec("CREATE TABLE unrelated (x INTEGER)");
  EXPECT_FALSE(inspect::has_server_schema(database(other)));
}

}  // namespace
}  // namespace exactly::server
