#pragma once
// The spelling of the sample servers' API keys: PRINCIPAL:KEY entries, one a line in a keys
// file, separated by whitespace in an environment variable. Errors never quote a key.

#include <exactly/server/http_server.hpp>

#include <cstddef>
#include <string_view>
#include <vector>

namespace exactly::samples::keys {

// Principals: 1 to 64 of A-Z a-z 0-9 . _ - @ (they are stored as owners and logged).
inline constexpr std::size_t max_principal_size = 64;
// Keys: 16 to 512 printable ASCII characters without spaces (what a Bearer header carries).
inline constexpr std::size_t min_key_size = 16;
inline constexpr std::size_t max_key_size = 512;

// One PRINCIPAL:KEY entry (split at the first ':'). Throws std::invalid_argument saying what is
// wrong, never quoting the key.
server::api_key parse_entry(std::string_view entry);

// The entries of a keys file's text: one PRINCIPAL:KEY a line; blank lines and lines starting with
// '#' are skipped; spaces, tabs and a '\r' around an entry are ignored. Throws
// std::invalid_argument "<source> line N: <what is wrong>".
std::vector<server::api_key> parse_lines(std::string_view text, std::string_view source);

// The entries of a whitespace-separated list (an environment variable). Throws
// std::invalid_argument "<source> entry N: <what is wrong>".
std::vector<server::api_key> parse_list(std::string_view text, std::string_view source);

// Throws std::invalid_argument when one key is given twice (naming the principals, not the key):
// a key must name exactly one principal. One principal may have several keys (rotation).
void check_distinct(const std::vector<server::api_key>& keys);

}  // namespace exactly::samples::keys
