#pragma once
// How exactly-admin writes times, ages and durations, reads durations, and prints tables.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::admin {

// The wall clock, Unix ms.
std::int64_t now_ms();
// "2026-11-25T19:30:00.123Z".
std::string utc_time(std::int64_t unix_ms);
// A short age: "850ms", "42s", "3m12s", "5h04m", "2d03h"; negative ages get a leading "-".
std::string short_age(std::int64_t ms);
// A duration as every exactly tool reads it (cli_config::parse_duration: "500ms", "90s", "10m",
// "2h", "7d", "0") in ms; throws usage_error saying the expected form for anything else.
std::int64_t parse_duration(std::string_view text);

// What a terminal shows: `text` with every control character (C0, DEL, C1) and every byte that is
// not UTF-8 written as an escape (backslash n, r, t, x1b; C1 as backslash u0085); with
// `keep_newlines`, a newline stays a newline.
std::string escape_controls(std::string_view text, bool keep_newlines = false);

// `bytes` as text when it is printable UTF-8 (tabs and newlines allowed), else nullopt.
std::optional<std::string> printable(std::string_view bytes);
// `bytes` as a JSON value: {"text": ...} when printable, else {"hex": ...}; also "bytes": size.
nlohmann::json body_json(std::string_view bytes);

// `j` indented on stdout; bytes that are not UTF-8 replaced.
void print_json(const nlohmann::json& j);

// Columns padded to their widest cell, two spaces apart; the last column is not padded. Every
// cell is printed through escape_controls.
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);

}  // namespace exactly::admin
