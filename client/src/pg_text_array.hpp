#pragma once
// A PostgreSQL array literal of text values, to pass a list as one `$n::text[]` parameter.

#include <string>
#include <vector>

namespace exactly::client {

// `{"a","b"}`: each value double-quoted, with `"` and `\` escaped, so any text goes through.
inline std::string pg_text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (const std::string& v : values) {
    if (out.size() > 1)
      out += ',';
    out += '"';
    for (const char c : v) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace exactly::client
