#pragma once
// The server inspection's row reader: SQL both engines accept (? placeholders), each selected
// value read back as text, so every listing in inspect.cpp is written once.

#include <exactly/common/database.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exactly::server::inspect::detail {

// One parameter of a query: an integer or text.
struct sql_arg {
  sql_arg(std::int64_t n) : is_text(false), number(n) {}  // NOLINT: an integer is an argument
  sql_arg(std::string t) : is_text(true), text(std::move(t)) {}  // NOLINT
  bool is_text;
  std::int64_t number = 0;
  std::string text;
};

using cell = std::optional<std::string>;  // nullopt: NULL; otherwise text or the blob's bytes
using row = std::vector<cell>;

// The rows `sql` (? placeholders, `args` bound in order, at most 5) selects on either engine, each
// of its `columns` values as text (integers in decimal, blobs and bytea as their bytes).
std::vector<row> query_rows(const database& db, std::string_view sql, int columns,
                            const std::vector<sql_arg>& args);

// A cell as an integer; 0 for NULL.
std::int64_t as_int(const cell& c);

}  // namespace exactly::server::inspect::detail
