#pragma once
// The PostgreSQL test database of the client tests.

#include <test_db.hpp>

#include <memory>
#include <string>

namespace exactly::test {

// A fresh, empty schema in the test cluster, as a test_db.
std::unique_ptr<test_db> open_pg_db();
// The database `conninfo` names, as a test_db.
std::unique_ptr<test_db> open_pg_db(const std::string& conninfo);

}  // namespace exactly::test
