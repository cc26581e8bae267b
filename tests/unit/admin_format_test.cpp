// exactly-admin's own parsing and printing: durations, ages, what counts as printable text, and
// passwords kept out of the connection strings it logs.
#include "tools/admin/admin_db.hpp"
#include "tools/admin/format.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace exactly::admin {
namespace {

// The durations every exactly tool reads (cli_config::parse_duration), refusals as usage errors.
TEST(admin_format, durations_need_a_number_and_a_unit) {
  EXPECT_EQ(parse_duration("500ms"), 500);
  EXPECT_EQ(parse_duration("90s"), 90'000);
  EXPECT_EQ(parse_duration("10m"), 600'000);
  EXPECT_EQ(parse_duration("2h"), 7'200'000);
  EXPECT_EQ(parse_duration("7d"), 604'800'000);
  EXPECT_EQ(parse_duration("0s"), 0);
  EXPECT_EQ(parse_duration("0"), 0);
  for (const char* bad : {"", "10", "m", "1.5h", "-5s", "10 m", "10min", "99999999999999999d"})
    EXPECT_THROW(parse_duration(bad), usage_error) << bad;
  try {
    parse_duration("10");
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad duration '10'"), std::string::npos) << e.what();
  }
}

TEST(admin_format, control_characters_are_escaped_for_the_terminal) {
  EXPECT_EQ(escape_controls("plain h\xc3\xa9 \xe2\x82\xac"), "plain h\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(escape_controls("a\x1b[2Jb\rc\nd\te\x7f"), R"(a\x1b[2Jb\rc\nd\te\x7f)");
  EXPECT_EQ(escape_controls(std::string("\0", 1)), R"(\x00)");
  EXPECT_EQ(escape_controls("\xc2\x9b"
                            "1m"),
            R"(\u009b1m)");  // C1 CSI as UTF-8
  EXPECT_EQ(escape_controls("\x9b"
                            "1m"),
            R"(\x9b1m)");                              // a lone byte, not UTF-8
  EXPECT_EQ(escape_controls("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is text
  EXPECT_EQ(escape_controls("l1\nl2\r\x1b", true), "l1\nl2\\r\\x1b");
}

TEST(admin_format, table_cells_are_escaped_and_measured_escaped) {
  std::ostringstream out;
  print_table(out, {"A", "B"}, {{"x\x1b[2J\r", "y\nz"}, {"w", "v"}});
  EXPECT_EQ(out.str(), "A" + std::string(11, ' ') + "B\n" + R"(x\x1b[2J\r  y\nz)" + "\nw" +
                           std::string(11, ' ') + "v\n");
}

TEST(admin_format, ages_are_short) {
  EXPECT_EQ(short_age(850), "850ms");
  EXPECT_EQ(short_age(42'000), "42s");
  EXPECT_EQ(short_age(192'000), "3m12s");
  EXPECT_EQ(short_age(5 * 3'600'000 + 4 * 60'000), "5h04m");
  EXPECT_EQ(short_age(2 * 86'400'000 + 3 * 3'600'000), "2d03h");
  EXPECT_EQ(short_age(-1500), "-1s");
  EXPECT_EQ(utc_time(1'000'000'000'123), "2001-09-09T01:46:40.123Z");
}

TEST(admin_format, only_well_formed_utf8_text_prints_as_text) {
  EXPECT_EQ(printable("{\"a\":1}\n\ttab"), "{\"a\":1}\n\ttab");
  EXPECT_EQ(printable("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
            "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_FALSE(printable(std::string("a\0b", 3)));
  EXPECT_FALSE(printable("\xc3"));         // cut short
  EXPECT_FALSE(printable("\xc3\x28"));     // not a continuation byte
  EXPECT_FALSE(printable("\xff\xfe"));     // never in UTF-8
  EXPECT_FALSE(printable("\x1b[31mred"));  // a terminal escape
  EXPECT_EQ(body_json(std::string("\x00\xff", 2))["hex"], "00ff");
  EXPECT_EQ(body_json("ok")["text"], "ok");
}

TEST(admin_format, passwords_are_left_out_of_connection_strings) {
  EXPECT_EQ(redact_conninfo("host=db password=s3cret dbname=pay"),
            "host=db password=*** dbname=pay");
  EXPECT_EQ(redact_conninfo("host=db password = 'sec ret' dbname=pay"),
            "host=db password = *** dbname=pay");
  EXPECT_EQ(redact_conninfo("postgresql://ops:s3cret@db:5432/pay"),
            "postgresql://ops:***@db:5432/pay");
  EXPECT_EQ(redact_conninfo("postgres://db/pay?password=s3cret"), "postgres://db/pay?password=***");
  EXPECT_EQ(redact_conninfo("host=db dbname=pay"), "host=db dbname=pay");
}

}  // namespace
}  // namespace exactly::admin
