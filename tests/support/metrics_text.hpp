#pragma once
// Reading a /metrics page (Prometheus text exposition) in tests and benchmarks.

#include <sstream>
#include <string>

namespace exactly::test {

// The value of the line of `text` that starts with `series` (the name, and the labels as
// printed) and a space; `missing` when there is none.
inline double series_value(const std::string& text, const std::string& series,
                           double missing = -1) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  }
  return missing;
}

}  // namespace exactly::test
