// The ctest fixture of the PostgreSQL tests: `start FILE` creates and starts a cluster and
// describes it in FILE (replacing one a stopped run left behind); `stop FILE` removes it.
#include "pg_cluster.hpp"

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "start" && std::string(argv[1]) != "stop")) {
    std::fprintf(stderr, "usage: pg-test-cluster start|stop INFO_FILE\n");
    return 2;
  }
  try {
    exactly::test::pg_cluster::destroy(argv[2]);
    if (std::string(argv[1]) == "start") {
      exactly::test::pg_cluster c;
      c.write_info(argv[2]);
      std::printf("PostgreSQL test cluster at %s on port %d\n", c.dir().c_str(), c.port());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pg-test-cluster: %s\n", e.what());
    return 1;
  }
}
