// The report of a run (see table.hpp).
#include "table.hpp"

#include <algorithm>
#include <iomanip>

#include <nlohmann/json.hpp>

namespace exactly::conformance {

totals count(const std::vector<case_result>& results) {
  totals t;
  for (const case_result& r : results) {
    if (r.result == verdict::pass)
      ++t.passed;
    else if (r.result == verdict::partial)
      ++t.partial;
    else if (r.result == verdict::fail)
      ++t.failed;
    else
      ++t.skipped;
  }
  return t;
}

totals print_report(std::ostream& out, const std::vector<case_result>& results) {
  std::size_t width = 4;
  for (const case_result& r : results)
    width = std::max(width, r.name.size());
  out << std::left << std::setw(static_cast<int>(width)) << "case"
      << " | result | detail\n"
      << std::string(width, '-') << "-+--------+-------\n";
  for (const case_result& r : results) {
    std::string detail = r.detail;
    if (r.result == verdict::fail)
      detail = std::to_string(r.failures.size()) + " check(s) failed" +
               (detail.empty() ? "" : "; " + detail);
    out << std::setw(static_cast<int>(width)) << r.name << " | " << std::setw(6)
        << to_string(r.result) << " | " << detail << '\n';
  }
  for (const case_result& r : results) {
    if (r.result != verdict::fail)
      continue;
    out << "\nFAIL " << r.name << '\n';
    for (const std::string& f : r.failures)
      out << "- " << f << '\n';
  }
  const totals t = count(results);
  out << '\n'
      << t.passed << " passed, " << t.partial << " pass* (weaker check, see detail), " << t.failed
      << " failed, " << t.skipped << " skipped\n";
  return t;
}

void write_json(std::ostream& out, const std::vector<case_result>& results) {
  const totals t = count(results);
  nlohmann::json cases = nlohmann::json::array();
  for (const case_result& r : results) {
    cases.push_back({{"name", r.name},
                     {"result", to_string(r.result)},
                     {"detail", r.detail},
                     {"failures", r.failures}});
  }
  out << nlohmann::json{{"passed", t.passed},
                        {"partial", t.partial},
                        {"failed", t.failed},
                        {"skipped", t.skipped},
                        {"cases", cases}}
             .dump(1, ' ', false,
                   nlohmann::json::error_handler_t::replace)  // answers may not be UTF-8
      << '\n';
}

}  // namespace exactly::conformance
