// The server inspection API on SQLite, and a database without the server's tables.
#include "server/src/sqlite_store.hpp"
#include "tests/contract/server_inspect_contract.hpp"

namespace exactly::server {
namespace {

INSTANTIATE_TEST_SUITE_P(engines, server_inspect_contract,
                         ::testing::Values(inspect_factory([](const std::string& dir) {
                           inspected t;
                           t.store = std::make_unique<sqlite_store>(dir + "/server.db",
                                                                    sqlite::options{});
                           t.sqlite_conn = std::make_unique<sqlite::connection>(dir + "/server.db");
                           return t;
                         })),
                         [](const auto&) { return std::string("sqlite"); });

TEST(server_inspect_sqlite, a_database_without_the_server_tables_is_told_apart) {
  inspect_scratch_dir dir;
  sqlite::connection other((dir.path / "other.db").string());
  other.exec("CREATE TABLE unrelated (x INTEGER)");
  EXPECT_FALSE(inspect::has_server_schema(database(other)));
}

TEST(server_inspect_sqlite, states_are_named_and_parsed_both_ways) {
  for (auto s : {inspect::state::staged, inspect::state::executed, inspect::state::tombstone})
    EXPECT_EQ(inspect::parse_state(inspect::to_string(s)), s);
  EXPECT_FALSE(inspect::parse_state("stagd"));
  EXPECT_FALSE(inspect::parse_state(""));
}

}  // namespace
}  // namespace exactly::server
