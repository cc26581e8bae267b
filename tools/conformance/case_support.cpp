// Helpers shared by the runner's cases (see case_support.hpp).
#include "case_support.hpp"

#include "report.hpp"

#include <exactly/common/clock.hpp>

#include <atomic>

namespace exactly::conformance {

std::string with_id(const std::string& route, const std::string& id) {
  std::string out = route;
  const auto at = out.find("{id}");
  if (at != std::string::npos)
    out.replace(at, 4, id);
  return out;
}

std::string numbered_body(const std::string& body) {
  static std::atomic<std::int64_t> next{system_now_ms()};
  const std::string n = std::to_string(next++);
  std::string out = body;
  for (auto at = out.find("{n}"); at != std::string::npos; at = out.find("{n}", at + n.size()))
    out.replace(at, 3, n);
  return out;
}

const char* to_string(verdict v) {
  switch (v) {
    case verdict::pass:
      return "pass";
    case verdict::partial:
      return "pass*";
    case verdict::fail:
      return "FAIL";
    case verdict::skip:
      return "skip";
  }
  return "?";
}

}  // namespace exactly::conformance
