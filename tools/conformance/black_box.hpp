#pragma once
// The runner's own cases beyond the vectors, for any route: the lifecycle, every state reachable
// without the clock under every verb, ownership, concurrent POSTs, pipelining, malformed requests.

#include "report.hpp"
#include "target.hpp"

#include <functional>
#include <string>
#include <vector>

namespace exactly::conformance {

struct black_box_case {
  std::string name;  // "black-box/..."
  std::function<case_result(target&, const run_options&)> run;
};

// Every built-in case, in the order they run.
const std::vector<black_box_case>& black_box_cases();

}  // namespace exactly::conformance
