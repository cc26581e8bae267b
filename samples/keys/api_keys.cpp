// PRINCIPAL:KEY entries (api_keys.hpp).
#include "api_keys.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace exactly::samples::keys {
namespace {

bool principal_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '@';
}

bool key_char(char c) {
  return c > ' ' && c < 0x7f;
}

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && blank(s.back()))
    s.remove_suffix(1);
  return s;
}

}  // namespace

server::api_key parse_entry(std::string_view entry) {
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument("expected PRINCIPAL:KEY (no ':' found)");
  const std::string_view principal = entry.substr(0, colon);
  const std::string_view key = entry.substr(colon + 1);
  if (principal.empty() || principal.size() > max_principal_size) {
    throw std::invalid_argument("the principal must have 1 to " +
                                std::to_string(max_principal_size) + " characters");
  }
  for (const char c : principal) {
    if (!principal_char(c))
      throw std::invalid_argument("the principal may hold only A-Z a-z 0-9 . _ - @");
  }
  if (key.size() < min_key_size || key.size() > max_key_size) {
    throw std::invalid_argument("the key of principal " + std::string(principal) + " must have " +
                                std::to_string(min_key_size) + " to " +
                                std::to_string(max_key_size) +
                                " characters (make one with: openssl rand -hex 32)");
  }
  for (const char c : key) {
    if (!key_char(c)) {
      throw std::invalid_argument("the key of principal " + std::string(principal) +
                                  " may hold only printable ASCII characters without spaces");
    }
  }
  return {std::string(key), std::string(principal)};
}

std::vector<server::api_key> parse_lines(std::string_view text, std::string_view source) {
  std::vector<server::api_key> out;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto end = text.find('\n');
    const std::string_view line = trimmed(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#')
      continue;
    try {
      out.push_back(parse_entry(line));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(source) + " line " + std::to_string(number) + ": " +
                                  e.what());
    }
  }
  return out;
}

std::vector<server::api_key> parse_list(std::string_view text, std::string_view source) {
  std::vector<server::api_key> out;
  std::size_t number = 0;
  while (true) {
    while (!text.empty() && blank(text.front()))
      text.remove_prefix(1);
    if (text.empty())
      break;
    std::size_t end = 0;
    while (end < text.size() && !blank(text[end]))
      ++end;
    ++number;
    try {
      out.push_back(parse_entry(text.substr(0, end)));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(source) + " entry " + std::to_string(number) + ": " +
                                  e.what());
    }
    text.remove_prefix(end);
  }
  return out;
}

void check_distinct(const std::vector<server::api_key>& keys) {
  std::map<std::string_view, std::string_view> principal_of;
  for (const server::api_key& k : keys) {
    const auto [it, fresh] = principal_of.emplace(k.key, k.principal);
    if (!fresh) {
      throw std::invalid_argument("one key is given twice (principals " + std::string(it->second) +
                                  " and " + k.principal + "); each key must be distinct");
    }
  }
}

}  // namespace exactly::samples::keys
