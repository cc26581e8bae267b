#pragma once
// Small helpers the vector runner and the black-box cases share.

#include <cstdint>
#include <string>
#include <type_traits>

namespace exactly::conformance {

// `route` with its "{id}" replaced by `id`.
std::string with_id(const std::string& route, const std::string& id);
// `body` with each "{n}" replaced by a number not used before in this process (nor, as it
// starts from the clock, in an earlier run).
std::string numbered_body(const std::string& body);

// A value as a report shows it: strings quoted.
template <class T>
std::string show(const T& v) {
  if constexpr (std::is_convertible_v<T, std::string>)
    return "\"" + std::string(v) + "\"";
  else
    return std::to_string(v);
}

}  // namespace exactly::conformance
