// HTTP-dates to and from Unix milliseconds (see http_date.hpp), by the proleptic Gregorian
// calendar, without the C library's time zone or locale.
#include <exactly/common/http_date.hpp>

#include <array>
#include <cstdio>
#include <stdexcept>

namespace exactly {
namespace {

constexpr std::array<std::string_view, 7> weekdays{"Thu", "Fri", "Sat", "Sun",
                                                   "Mon", "Tue", "Wed"};  // day 0 was a Thursday
constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::int64_t ms_per_day = 86'400'000;

struct civil {
  std::int64_t year;
  unsigned month;  // 1..12
  unsigned day;    // 1..31
};

// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(civil c) {
  const std::int64_t y = c.year - (c.month <= 2 ? 1 : 0);
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t mp = (c.month + 9) % 12;
  const std::int64_t doy = (153 * mp + 2) / 5 + c.day - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The civil date of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const auto day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  const auto month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

// Floor division, so instants before 1970 round down too.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// The decimal number of exactly `n` digits at `text[at..]`, or -1.
int digits(std::string_view text, std::size_t at, std::size_t n) {
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9')
      return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

std::string format_http_date(std::int64_t unix_ms) {
  const std::int64_t days = floor_div(unix_ms, ms_per_day);
  const std::int64_t ms_of_day = unix_ms - days * ms_per_day;
  const civil c = civil_from_days(days);
  if (c.year < 1970 || c.year > 9999)
    throw std::out_of_range("HTTP-date outside the years 1970..9999");
  const std::int64_t s = ms_of_day / 1000;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02u %s %04lld %02lld:%02lld:%02lld GMT",
                std::string(weekdays[static_cast<std::size_t>(days % 7)]).c_str(), c.day,
                std::string(months[c.month - 1]).c_str(), static_cast<long long>(c.year),
                static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                static_cast<long long>(s % 60));
  return buf;
}

std::optional<std::int64_t> parse_http_date(std::string_view t) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": 29 characters, every position fixed.
  if (t.size() != 29 || t.substr(3, 2) != ", " || t[7] != ' ' || t[11] != ' ' || t[16] != ' ' ||
      t[19] != ':' || t[22] != ':' || t.substr(25) != " GMT") {
    return std::nullopt;
  }
  unsigned month = 0;
  for (unsigned m = 0; m < months.size(); ++m) {
    if (t.substr(8, 3) == months[m])
      month = m + 1;
  }
  const int day = digits(t, 5, 2), year = digits(t, 12, 4);
  const int hour = digits(t, 17, 2), minute = digits(t, 20, 2), second = digits(t, 23, 2);
  if (month == 0 || day < 1 || year < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60) {  // 60: a leap second, read as the next second
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil({year, month, static_cast<unsigned>(day)});
  const civil back = civil_from_days(days);
  if (back.month != month || back.day != static_cast<unsigned>(day))
    return std::nullopt;  // 31 Feb and the like
  if (t.substr(0, 3) != weekdays[static_cast<std::size_t>(((days % 7) + 7) % 7)])
    return std::nullopt;
  return days * ms_per_day + ((hour * 60 + minute) * 60 + second) * std::int64_t{1000};
}

}  // namespace exactly
