#pragma once
// What a conformance run is told (run_options) and what each case reports (case_result).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace exactly::conformance {

struct run_options {
  std::string route = "/vectors/echo/{id}";  // the interaction route, {id} for the request id
  std::string key{};                         // principal A's API key ("alice" in the vectors)
  std::string second_key{};  // principal B's ("bob"); "" = cases with two principals are skipped
  // The route answers as the echo route of proto-spec §11; else the vectors run with `body` and
  // `invalid_body`, and business answers are checked only against the first stored one.
  bool echo = true;
  std::string body{};          // not echo: a valid PUT body; each "{n}" becomes a fresh number
  std::string invalid_body{};  // not echo: a PUT body the route refuses (422)
  bool spec_limits = false;    // the server has §11's limits (body 1024, 3 and 2048 staged)
  std::size_t max_body_bytes = 1 << 20;  // the server's body limit (the 413 case sends one more)
  // Without a server clock (no test control), retention dates may differ this much from ours.
  std::int64_t clock_tolerance_ms = 2000;
  int concurrency = 8;  // connections POSTing one id at once
};

// partial: every check held, but one of them was weaker than the vector asks (e.g. executions
// counted from the runner's own answers because the server cannot count them); shown as "pass*"
// and counted apart, never as a pass.
enum class verdict { pass, partial, fail, skip };

struct case_result {
  std::string name;
  verdict result = verdict::pass;
  std::string detail{};                 // why skipped, or which checks were relaxed (why partial)
  std::vector<std::string> failures{};  // each: the check, the request and the answer
};

// "pass", "pass*", "FAIL", "skip".
const char* to_string(verdict v);

}  // namespace exactly::conformance
