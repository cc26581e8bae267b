// Times, ages, durations and tables for exactly-admin's output (see format.hpp).
#include "format.hpp"

#include "admin_db.hpp"

#include <exactly/common/digest.hpp>

#include <units.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>

namespace exactly::admin {
namespace {

// The length of the well-formed UTF-8 sequence (2 to 4 bytes) `s` starts with; 0 if none.
std::size_t utf8_length(std::string_view s) {
  const auto c = static_cast<unsigned char>(s[0]);
  std::size_t more = 0;
  if (c >= 0xc2 && c <= 0xdf)
    more = 1;
  else if (c >= 0xe0 && c <= 0xef)
    more = 2;
  else if (c >= 0xf0 && c <= 0xf4)
    more = 3;
  else
    return 0;
  if (more >= s.size())
    return 0;
  for (std::size_t k = 1; k <= more; ++k) {
    if ((static_cast<unsigned char>(s[k]) & 0xc0) != 0x80)
      return 0;
  }
  return more + 1;
}

}  // namespace

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string utc_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unix_ms % 1000));
  return buf;
}

std::string short_age(std::int64_t ms) {
  if (ms < 0)
    return "-" + short_age(-ms);
  char buf[64];
  const std::int64_t s = ms / 1000, m = s / 60, h = m / 60, d = h / 24;
  if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ms));
  else if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (m < 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(m),
                  static_cast<long long>(s % 60));
  else if (h < 24)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(h),
                  static_cast<long long>(m % 60));
  else
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(d),
                  static_cast<long long>(h % 24));
  return buf;
}

std::int64_t parse_duration(std::string_view text) {
  try {
    return cli_config::parse_duration(text).count();
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
}

std::string escape_controls(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      if (c == '\n')
        out += keep_newlines ? "\n" : "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is kept, except the C1 controls U+0080..U+009F; any other
    // byte is shown as \xNN (a terminal may read a lone 0x9b as a control sequence).
    const std::size_t n = utf8_length(text.substr(i));
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buf;
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::optional<std::string> printable(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
        return std::nullopt;
      if (c == 0x7f)
        return std::nullopt;
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(bytes.substr(i));
    if (n == 0)
      return std::nullopt;
    i += n;
  }
  return std::string(bytes);
}

nlohmann::json body_json(std::string_view bytes) {
  nlohmann::json j = {{"bytes", bytes.size()}};
  if (const auto text = printable(bytes))
    j["text"] = *text;
  else
    j["hex"] = to_hex(bytes);
  return j;
}

void print_json(const nlohmann::json& j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void print_table(std::ostream& out, const std::vector<std::string>& header_in,
                 const std::vector<std::vector<std::string>>& rows_in) {
  const auto escaped = [](const std::vector<std::string>& r) {
    std::vector<std::string> e;
    for (const auto& cell : r)
      e.push_back(escape_controls(cell));
    return e;
  };
  const std::vector<std::string> header = escaped(header_in);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : rows_in)
    rows.push_back(escaped(r));
  std::vector<std::size_t> width(header.size(), 0);
  const auto measure = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  };
  measure(header);
  for (const auto& r : rows)
    measure(r);
  const auto print = [&](const std::vector<std::string>& r) {
    for (std::size_t c = 0; c < r.size(); ++c) {
      out << r[c];
      if (c + 1 < r.size())
        out << std::string(width[c] - r[c].size() + 2, ' ');
    }
    out << '\n';
  };
  print(header);
  for (const auto& r : rows)
    print(r);
}

}  // namespace exactly::admin
