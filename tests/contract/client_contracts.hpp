#pragma once
// The client's store, endpoint and runtime contracts, written once and run on each engine: the
// unit tests instantiate them on SQLite, exactly_postgres_client_tests on PostgreSQL.

#include <test_db.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include <memory>
#include <ostream>
#include <string>

namespace exactly::test {

struct engine_param {
  const char* name;
  db_factory open;
};

// Test output names the engine, not the bytes of the parameter.
inline void PrintTo(const engine_param& p, std::ostream* os) {
  *os << p.name;
}

// A test with a fresh database of the engine it is instantiated with.
class client_contract : public ::testing::TestWithParam<engine_param> {
 protected:
  client_contract() : tdb_(GetParam().open()) {}
  database db() { return tdb_->db(); }
  test_db& tdb() { return *tdb_; }

 private:
  std::unique_ptr<test_db> tdb_;
};

class invocation_store_contract : public client_contract {};
// Endpoints on one database with an `orders` table and a clock the test moves.
class endpoint_contract : public client_contract {
 protected:
  endpoint_contract() {
    exec_sql(db(), "CREATE TABLE orders (id TEXT PRIMARY KEY, amount BIGINT)");
  }
  client::endpoint_options opts() {
    return {.max_attempts = 3,
            .retry_base = std::chrono::milliseconds(10),
            .retry_cap = std::chrono::milliseconds(10),
            .clock = [this] { return now_.load(); }};
  }
  std::int64_t orders() { return query_int(db(), "SELECT count(*) FROM orders"); }

  std::atomic<std::int64_t> now_{1'000'000};
};
class runtime_contract : public client_contract {};
class inspect_contract : public client_contract {};
class queue_store_contract : public client_contract {};

// The name of an instantiation's engine, for test names.
inline std::string engine_name(const ::testing::TestParamInfo<engine_param>& info) {
  return info.param.name;
}

}  // namespace exactly::test

// Instantiates the client contract `suite` (invocation_store_contract, endpoint_contract,
// runtime_contract, inspect_contract, queue_store_contract) on one engine:
// EXACTLY_CLIENT_CONTRACT(sqlite, endpoint_contract, open_sqlite_db) names its tests
// sqlite/endpoint_contract.<test>/sqlite.
#define EXACTLY_CLIENT_CONTRACT(engine, suite, factory)                                      \
  INSTANTIATE_TEST_SUITE_P(engine, suite, ::testing::Values(engine_param{#engine, factory}), \
                           engine_name)
