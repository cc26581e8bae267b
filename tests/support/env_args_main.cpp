// A GoogleTest main for suites run several ways by ctest: each --exactly-env=NAME=VALUE argument
// sets NAME in the environment before the tests start (and the processes they start inherit it).
// gtest_discover_tests passes them as TEST_EXTRA_ARGS, one argument each, where a list of
// variables in its PROPERTIES ENVIRONMENT would be split into separate properties (CMake 3.25).

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  constexpr const char* prefix = "--exactly-env=";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) != 0) {
      rest.push_back(argv[i]);
      continue;
    }
    const std::string setting = argv[i] + std::strlen(prefix);
    const auto eq = setting.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "not NAME=VALUE: " << argv[i] << "\n";
      return 2;
    }
    setenv(setting.substr(0, eq).c_str(), setting.substr(eq + 1).c_str(), 1);
  }
  int rest_count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&rest_count, rest.data());
  return RUN_ALL_TESTS();
}
