// HTTP-dates: the IMF-fixdate form written and read, rounding down to the second.

#include <exactly/common/http_date.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace exactly {
namespace {

constexpr std::int64_t rfc_example_ms = 784'111'777'000;  // RFC 9110's Sun, 06 Nov 1994 08:49:37

TEST(http_date, formats_the_imf_fixdate) {
  EXPECT_EQ(format_http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(format_http_date(rfc_example_ms), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(format_http_date(1'709'164'800'000), "Thu, 29 Feb 2024 00:00:00 GMT");
  EXPECT_EQ(format_http_date(253'402'300'799'000), "Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST(http_date, rounds_down_to_the_second) {
  EXPECT_EQ(format_http_date(rfc_example_ms + 999), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(format_http_date(rfc_example_ms - 1), "Sun, 06 Nov 1994 08:49:36 GMT");
  EXPECT_EQ(format_http_date(86'400'000 - 1), "Thu, 01 Jan 1970 23:59:59 GMT");
}

TEST(http_date, refuses_years_it_cannot_write) {
  EXPECT_THROW(format_http_date(-1), std::out_of_range);
  EXPECT_THROW(format_http_date(max_http_date_ms + 1000), std::out_of_range);
  EXPECT_EQ(format_http_date(max_http_date_ms + 999), "Fri, 31 Dec 9999 23:59:59 GMT");
}

TEST(http_date, parses_what_it_formats) {
  for (const std::int64_t ms :
       {std::int64_t{0}, rfc_example_ms, std::int64_t{1'709'164'800'000},
        std::int64_t{1'795'000'000'000}, std::int64_t{253'402'300'799'000}}) {
    EXPECT_EQ(parse_http_date(format_http_date(ms)), ms) << ms;
  }
  EXPECT_EQ(parse_http_date(format_http_date(rfc_example_ms + 999)), rfc_example_ms);
}

TEST(http_date, refuses_other_text) {
  EXPECT_FALSE(parse_http_date(""));
  EXPECT_FALSE(parse_http_date("784111777000"));
  EXPECT_FALSE(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"));  // RFC 850
  EXPECT_FALSE(parse_http_date("Sun Nov  6 08:49:37 1994"));        // asctime
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"));
  EXPECT_FALSE(parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT"));  // wrong weekday
  EXPECT_FALSE(parse_http_date("Sun, 06 Noe 1994 08:49:37 GMT"));
  EXPECT_FALSE(parse_http_date("Sat, 31 Feb 2024 00:00:00 GMT"));  // no such day
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 24:00:00 GMT"));
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 08:60:00 GMT"));
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:3x GMT"));
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT "));
}

}  // namespace
}  // namespace exactly
