#pragma once
// The report of a run: a table "case | result | detail", then each failure with its request and
// answer, then the counts.

#include "report.hpp"

#include <ostream>
#include <vector>

namespace exactly::conformance {

struct totals {
  int passed = 0, partial = 0, failed = 0, skipped = 0;
};

totals count(const std::vector<case_result>& results);
// Prints the table, the failures and the summary line; returns the counts.
totals print_report(std::ostream& out, const std::vector<case_result>& results);
// The same as one JSON document: {"passed","partial","failed","skipped","cases":[{"name",
// "result","detail","failures"}]}.
void write_json(std::ostream& out, const std::vector<case_result>& results);

}  // namespace exactly::conformance
