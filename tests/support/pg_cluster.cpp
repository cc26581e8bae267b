// The tests' cluster: the ctest fixture's, else one of this process (see pg_cluster.hpp).
#include "pg_cluster.hpp"

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace exactly::test {

const pg_cluster& test_cluster() {
  static const std::unique_ptr<pg_cluster> cluster = [] {
    const char* info = std::getenv("EXACTLY_TEST_PG");
    if (info && *info && std::filesystem::exists(info))
      return std::make_unique<pg_cluster>(std::string(info));
    return std::make_unique<pg_cluster>();
  }();
  return *cluster;
}

}  // namespace exactly::test
