#pragma once
// The PostgreSQL cluster of the tests (tools/pg-cluster): one per ctest run, or per process.

#include <pg_cluster_tool.hpp>

namespace exactly::test {

using tools::pg_cluster;

// The cluster of this test process: the one the ctest fixture started (EXACTLY_TEST_PG names its
// info file), else one started now and removed when the process exits.
const pg_cluster& test_cluster();

}  // namespace exactly::test
