// Crash points: a test process named by EXACTLY_CRASH_AT exits at once where it is reached.
#include <exactly/common/crash_point.hpp>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace exactly {

void crash_point(std::string_view name) {
  static const std::string target = [] {
    const char* v = std::getenv("EXACTLY_CRASH_AT");
    return std::string(v ? v : "");
  }();
  if (!target.empty() && target == name)
    _exit(crash_exit_code);
}

}  // namespace exactly
